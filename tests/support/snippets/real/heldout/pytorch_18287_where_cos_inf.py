# source: https://github.com/pytorch/pytorch/issues/18287
# edits: none
import torch
import math

x = torch.tensor([0.0, math.inf], requires_grad=True)
y = torch.where(x < 1.0, torch.cos(x), torch.zeros_like(x))

print(torch.autograd.grad(y.sum(), x))
