# source: https://github.com/pytorch/pytorch/issues/10943
# edits: import torch added
import torch
import torch.nn as nn
from torch.distributions import Normal


mean_head = nn.Linear(3, 1)
logvar_head = nn.Linear(3, 1)

x = torch.randn(1, 3)

mean = mean_head(x)
logvar = logvar_head(x)
std = torch.exp(0.5*logvar)

d = Normal(mean, std)
a = d.rsample()
logprob = d.log_prob(a)

L = -logprob

mean_head.zero_grad()
logvar_head.zero_grad()

L.backward()

print('loss: ', L)
print('mean: ', mean)
print('std: ', std)
print('action:', a)
print('')
print('mean grad: ', mean_head.weight.grad)
print('std grad: ', logvar_head.weight.grad)
