# source: https://github.com/zhuyekun/pytorch-PINN
# edits: the notebook's first three cells, one after the other (bare expressions printed)
# gathered: 2026-12-07b
import torch
a = torch.tensor([1., 2., 3.])
b = torch.tensor([4., 5., 6.], requires_grad=True)

print("sin(a):", torch.sin(a))
print("sin(b):",torch.sin(b))

c = torch.sin(torch.sin(b).sum()**2)
print("c:", c)

print('c:')
print(c.grad_fn)
print(c.grad_fn.next_functions)
print(c.grad_fn.next_functions[0][0].next_functions)
print(c.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
print(c.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
print(c.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)

print("b.grad_fn:", b.grad_fn)

from torch.autograd import grad

d = torch.sum(b**2)

print(grad(d, b))

e = b**2

print(grad(e, b, grad_outputs=torch.ones_like(e)))
