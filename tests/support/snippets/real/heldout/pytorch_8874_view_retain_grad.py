# source: https://github.com/pytorch/pytorch/issues/8874
# edits: import torch added; the second snippet, with xx.grad printed
import torch

x = torch.ones(4, requires_grad=True).clone()
xx = x[2:]
y = xx[1]
xx.retain_grad()
#x[0] += 0
y.backward()
print(xx.grad)
