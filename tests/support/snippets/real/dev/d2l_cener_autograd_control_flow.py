# source: https://github.com/cener-1999/AI-Learning-Journey
# edits: notebook cells joined; bare expressions printed
# gathered: 2026-12-07
import torch
x = torch.arange(4.0)
print(x)
x.requires_grad_(True)  # 标识一个tensor是否需要在计算中保留梯度信息
print(x.grad)
y = 2 * torch.dot(x, x)
print(y)
y.backward()
print(x.grad)
print(x.grad == 4 * x)
x.grad.zero_()
y = x.sum()
y.backward()
print(x.grad)
x.grad.zero_()
y = x * x
y.backward(torch.ones(len(x)))
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
def f(a):
    b = a * 2
    while b.norm() < 1000: # L2范数是向量元素平方和的平方根
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c
a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()
print(a.grad == d/a)
print(a.shape)
