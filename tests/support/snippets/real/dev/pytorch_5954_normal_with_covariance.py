# source: https://github.com/pytorch/pytorch/issues/5954
# edits: numpy (not installed here) replaced by the torch calls that make the same C (torch.randn, .t().mm)
import torch
from torch.autograd import Variable
from torch.distributions.normal import Normal

mu = Variable(torch.randn(5), requires_grad=True)
C = torch.randn((5,5)) * 0.01
C = C.t().mm(C) # only to make it +ve semi definite
C = Variable(torch.Tensor(C), requires_grad=True)

# for my case these variables are created by a network and i need to take a backward
m = Normal(mu, C)

target = Variable(torch.randn(5)) # target variable is from test

# need to minimize the -ve log probability of target wrt the parameters (here mu and C)

loss = -m.log_prob(target) # this gives loss as a matrix with nan
# but log_prob even for multivariate should be a scalar for single input
loss.backward()  # loss.backward() won't work as it needs a scalar
print(m.sample()) # should be a vector either (5, 1) or (5, ) but it gives (5, 5) size output 
