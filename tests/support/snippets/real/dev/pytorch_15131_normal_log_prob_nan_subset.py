# source: https://github.com/pytorch/pytorch/issues/15131
# edits: numpy (not installed here) dropped: np.nan written as float('nan')
import torch
import torch.nn as nn
import torch.distributions as dist
x = torch.tensor([1.0,2,3,float('nan')])
y = torch.tensor([1.0,2,3,4])

k = nn.Parameter(0.01*torch.randn(1))

d = dist.Normal(loc=k*x, scale=1)

log_prob = d.log_prob(y)
print(log_prob)
# tensor([-1.4253, -2.9444, -5.4763,     nan], grad_fn=<SubBackward>)

loss = -log_prob[:-1].mean()
print(loss)
# tensor(3.2820, grad_fn=<NegBackward>)

loss.backward()
print(k.grad)
# tensor([nan])
