# source: https://github.com/pytorch/pytorch/issues/4620
# edits: none
import torch
from torch.autograd import Variable


mu = Variable(torch.Tensor([1]), requires_grad=True)
sigma = Variable(torch.Tensor([1]), requires_grad=True)
loss = torch.pow(torch.normal(mu, sigma), 2)
loss.backward()
