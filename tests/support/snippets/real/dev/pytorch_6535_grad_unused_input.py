# source: https://github.com/pytorch/pytorch/issues/6535
# edits: the "master" REPL session as a script, results printed
import torch
x = torch.randn(3, requires_grad=True)
y = torch.randn(3, requires_grad=True)
print(torch.autograd.grad(y.sum(), x))
z = x.sum()
print(torch.autograd.grad(y.sum(), x))
