# source: https://github.com/pytorch/pytorch/pull/1016
# edits: imports added
import torch
from torch.autograd import Variable, grad

x = Variable(torch.FloatTensor([1,2]), requires_grad=True)
y = x[0].pow(2) * x[1]

dx, = grad(y, x, create_graph=True)
print(dx)  # (4,1)'

dx_dx1, = grad(dx, x, grad_outputs=torch.FloatTensor([1,0]), retain_graph=True)
dx_dx2, = grad(dx, x, grad_outputs=torch.FloatTensor([0,1]))

print(dx_dx1)  # (4,2)'
print(dx_dx2)  # (2,0)'
