# source: https://github.com/xiaobaoonline/pytorch-in-action/issues/4
# edits: none (the second comment's code)
import torch
from torch import tensor
x = torch.rand(4, requires_grad=True)
y= x * 3
grad_variables = torch.FloatTensor([1,2,3,4])
y.backward(grad_variables)
print(x.grad)
