# source: https://github.com/pytorch/pytorch/issues/97500
# edits: import torch added
import torch

x = torch.tensor(2., requires_grad=True).clone()
y = torch.tensor(1.)
out = x ** 2
x.set_(y)
out.backward()
