# source: https://github.com/pytorch/pytorch/issues/8304
# edits: a small f and x added before the loop
# gathered: 2026-12-07b
import torch

def f(x):
    return x ** 2 + x.sum()

x = torch.randn(3, requires_grad=True)

J = []
F = f(x)
for i in range(len(x)):
    J.append(torch.autograd.grad(F[i], x))
