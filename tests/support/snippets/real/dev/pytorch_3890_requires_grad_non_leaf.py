# source: https://github.com/pytorch/pytorch/issues/3890
# edits: the unused numpy import dropped (numpy is not installed here)
import torch
from torch.autograd import Variable

x = Variable(torch.zeros(3,3), requires_grad=True)
s = torch.sigmoid(x)
s.requires_grad = True
s.retain_grad()
total = torch.sum(s)
total.backward()
assert(s.grad is not None)
