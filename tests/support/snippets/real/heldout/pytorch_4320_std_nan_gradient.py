# source: https://github.com/pytorch/pytorch/issues/4320
# edits: the first of the two commented-out lines un-commented (the post runs one or the other); size 16x3x64x64 -> 4x3x4x4
import torch
from torch.autograd.variable import Variable
import torch.nn.functional as F

a = Variable(torch.FloatTensor(4,3,4,4).zero_(),requires_grad=True)

b = a.std(dim=0).mean()  # NaN gradients
# b = (a - a.mean(dim=0,keepdim=True)).norm(p=2,dim=0).mean() / (15**0.5)  # 0 gradients

b.backward()

print(a.grad.data)
