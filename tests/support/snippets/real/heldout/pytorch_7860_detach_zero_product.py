# source: https://github.com/pytorch/pytorch/issues/7860
# edits: import torch added; the posted block dedented to module level
import torch

print(torch.__version__)

a = torch.Tensor([1, 2])
a.requires_grad_(True)

b = torch.Tensor([2, 3])
b.requires_grad_(True)

y = torch.Tensor([1, 1])
y.requires_grad_(True)

x = a * b
x_detach = x.detach()

print("x = a * b (a = 2, b = 3)")
print("x require gard:", x.requires_grad)
print("x.detach() require gard:", x_detach.requires_grad)

print('-' * 6, "Before Fill", '-' * 6)
print("x:", x)
print("x.detach():", x_detach)

print('-' * 6, "After x.detach().zero_()", '-' * 6)
x_detach.zero_()
print("x:", x)
print("x.detach():", x_detach)

print("out = (x * y).sum()")
print("x.backward()")
out = (x * y).sum()
out.backward()

print("out:", out)
print("x.grad:", x.grad)
print("y.grad:", y.grad)
print("a.grad:", a.grad)
print("b.grad:", b.grad)
