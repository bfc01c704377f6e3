# source: https://github.com/pytorch/pytorch/pull/26607
# edits: import torch added
import torch

x = torch.ones(10, requires_grad=True)
with torch.no_grad():
    y = x[1:]
y.add_(0)
