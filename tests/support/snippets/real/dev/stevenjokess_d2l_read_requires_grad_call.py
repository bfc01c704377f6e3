# source: https://github.com/StevenJokess/d2l-en-read
# edits: the notebook's cells, one after the other, up to the one that fails
# gathered: 2026-12-07b
import torch

from torch.autograd import Variable

x = torch.arange(4.0, requires_grad=True)
# make it as a Variable with a gradient taken.
# .requires_grad_( ... ) changes an existing Tensor’s requires_grad flag in-place.
# instead of x =  torch.autograd.Variable(x, requires_grad=True)
x.requires_grad()
y = x * x
y.backward(torch.ones(y.size()))
