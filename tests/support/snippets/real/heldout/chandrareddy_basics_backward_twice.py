# source: https://github.com/chandrareddytiyyagura/pytorch-basics
# edits: the notebook's cells up to the one that fails, one after the other (bare expressions printed); its unused numpy import dropped (not installed)
# gathered: 2026-12-07b
import torch


x = torch.tensor(5.0, requires_grad=True)
print(x)

y = x ** 3

print(y)

y.backward()

print(x.grad)

y.backward()
print(x.grad)
