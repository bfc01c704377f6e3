# hand-written SGD update on the weights, without torch.no_grad()
import torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
x, y = torch.randn(8, 3), torch.randn(8, 1)
lr = 0.1
for epoch in range(3):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
