# source: https://github.com/tinygrad/tinygrad/issues/9723
# edits: none (the PyTorch lines)
import torch
print(torch.tensor([1, 2, 3], requires_grad=True).tolist())
