# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/87
# edits: x, z and out defined as in the book's section 2.3 around the posted lines
import torch

x = torch.ones(2, 2, requires_grad=True)
y = x + 2
print(y.grad_fn)
z = y * y * 3
out = z.mean()
out.backward() # 等价于 out.backward(torch.tensor(1.))
print(x.grad)
