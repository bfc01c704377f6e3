# source: https://github.com/pytorch/pytorch/issues/92586
# edits: the second of the two blocks (the one that runs); the first differs only by the requires_grad line
import torch
t = torch.randn(5, requires_grad=True)

def func(t):
    t_copy = t.detach()
    t_copy.requires_grad = True
    return t_copy

func(t).sum().backward()
