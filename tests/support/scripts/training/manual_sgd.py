# Linear regression by hand: ten iterations of manual SGD under torch.no_grad()
import torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
x = torch.randn(20, 3)
y = x @ torch.tensor([[2.0], [-1.0], [0.5]]) + 0.3
for i in range(10):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad.zero_()
