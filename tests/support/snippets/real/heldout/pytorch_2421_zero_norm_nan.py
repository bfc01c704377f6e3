# source: https://github.com/pytorch/pytorch/issues/2421
# edits: imports added; Python 2 print written as print()
import torch
from torch.autograd import Variable

x = Variable(torch.zeros(1), requires_grad=True)
x.norm().backward()
print(x.grad)
