# source: https://github.com/pytorch/pytorch/issues/53466
# edits: import torch added
import torch

x = torch.tensor([1], requires_grad=True)
