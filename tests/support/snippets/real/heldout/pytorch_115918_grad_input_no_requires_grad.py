# source: https://github.com/pytorch/pytorch/issues/115918
# edits: none
import torch
a = torch.tensor([1.0, 2.0])
b = torch.tensor([3., 4.], requires_grad=True)
c = a @ b
torch.autograd.grad(c, [a,b], allow_unused=True)
