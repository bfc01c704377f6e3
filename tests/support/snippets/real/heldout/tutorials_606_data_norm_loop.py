# source: https://github.com/pytorch/tutorials/issues/606
# edits: import torch added; y printed
import torch

x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)
