# source: https://github.com/pytorch/pytorch/issues/36608
# edits: IPython prompts and the printed error removed (as a script it stops at the first error)
import torch

root = torch.arange(9.).reshape(3, 3).requires_grad_()

x = root.clone()

v1 = x.unbind()

v1[0].mul_(2)

v2 = v1[0].narrow(0, 0, 2)

v2.mul_(2)

v2.sum().backward()

root.grad
