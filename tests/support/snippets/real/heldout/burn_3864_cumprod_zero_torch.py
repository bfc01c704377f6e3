# source: https://github.com/tracel-ai/burn/issues/3864
# edits: none (the PyTorch reference snippet)
import torch

x = torch.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
y = torch.cumprod(x, dim=0)  # [2, 0, 0, 0]
y.sum().backward()
print(x.grad)  # tensor([1., 32., 0., 0.])
