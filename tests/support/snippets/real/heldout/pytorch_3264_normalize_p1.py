# source: https://github.com/pytorch/pytorch/issues/3264
# edits: the first of the two commented-out lines un-commented (the post runs one or the other)
import torch
from torch.autograd.variable import Variable
import torch.nn.functional as F

a = Variable(torch.FloatTensor([[0,0,0,0,0.1996]]),requires_grad=True)
b = F.normalize(a, p=1, dim=1)  # nan nan nan nan 0
# b = a / a.sum().clamp(min=1e-12)  # 0 0 0 0 0
b.sum().backward()

print(a.grad.data)
