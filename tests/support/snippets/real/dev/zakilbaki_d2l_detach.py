# source: https://github.com/zakilbaki/repertoire-d2l_zak
# edits: notebook cells joined; bare expressions printed
# gathered: 2026-12-07
import torch
x = torch.arange(4.0)
x.requires_grad_(True)
print(x.grad)  # The gradient is None by default
y = 2 * torch.dot(x, x)
y.backward()
print(x.grad == 4 * x)
x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
print(x.grad)
x.grad.zero_()
y = x * x
u = y.detach()
z = u * x
z.sum().backward()
print(x.grad == u)
x.grad.zero_()
y.sum().backward()
print(x.grad == 2 * x)
