# WGAN-GP style gradient penalty, but autograd.grad was called without create_graph
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
x = torch.randn(4, 2, requires_grad=True)
score = critic(x).sum()
grads = torch.autograd.grad(score, x)[0]
penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
penalty.backward()
print(critic[0].weight.grad)
