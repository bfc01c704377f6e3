# source: https://github.com/pytorch/pytorch/pull/39299
# kind: view-inplace
# edits: the chunk outputs the pull request describes, one modified in place, then backward
import torch

torch.manual_seed(0)
x = torch.randn(4, 6, requires_grad=True)
y = x * 2
a, b = y.chunk(2, dim=1)
a.relu_()
loss = (a * b).sum()
loss.backward()
