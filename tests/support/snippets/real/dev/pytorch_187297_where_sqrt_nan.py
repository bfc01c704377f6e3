# source: https://github.com/pytorch/pytorch/issues/187297
# edits: none
import torch

xt = torch.tensor([-1.0, -4.0], dtype=torch.float32, requires_grad=True)

y = torch.where(xt > 0, torch.sqrt(xt), xt).sum()
y.backward()

actual = xt.grad
expected = torch.tensor([1.0, 1.0], dtype=torch.float32)

print("actual:")
print(actual)
print("expected:")
print(expected)
