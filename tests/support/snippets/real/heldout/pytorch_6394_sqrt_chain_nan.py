# source: https://github.com/pytorch/pytorch/issues/6394
# edits: REPL prompts removed, imports added, x.grad printed
import torch
from torch.autograd import Variable

x=Variable(torch.Tensor([1]),requires_grad=True)
y=torch.sqrt(torch.pow(x - 1,0))
y.backward()
print(x.grad)

x=Variable(torch.Tensor([1]),requires_grad=True)
y=x-1
y.backward()
print(x.grad)
