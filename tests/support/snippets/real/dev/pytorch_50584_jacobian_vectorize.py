# source: https://github.com/pytorch/pytorch/issues/50584
# edits: none (the example)
# gathered: 2026-12-07b
import torch
x = torch.randn(5, requires_grad=True)
f = lambda x: x ** 2
expected = torch.autograd.functional.jacobian(f, x)
jac = torch.autograd.functional.jacobian(f, x, vectorize=True)
assert torch.allclose(jac, expected)
