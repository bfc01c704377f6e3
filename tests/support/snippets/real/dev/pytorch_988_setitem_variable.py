# source: https://github.com/pytorch/pytorch/pull/988
# edits: none
from torch.autograd import Variable
import torch.nn.functional as F
import torch

x = Variable(torch.randn(1, 20), requires_grad=True)
y = Variable(torch.zeros(10, 20))
y[1] = x

y.backward(torch.randn(10, 20))
print(x.grad)
