# source: https://github.com/pytorch/pytorch/issues/8287
# edits: .cuda(0) calls removed (CPU only)
import torch
import torch.nn as nn

x = torch.randn(2, 2, requires_grad=True)
t = torch.randn(2, 2)
loss_func = nn.MSELoss()
l1 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)])
l2 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)])
h1 = l1(x)
h2 = h1.detach().requires_grad_()
h3 = l2(h2)
l = loss_func(h3, t)
l.backward()
print('h2:', h2.grad)
h1.backward(gradient=h2.grad)
print('x:', x.grad)
