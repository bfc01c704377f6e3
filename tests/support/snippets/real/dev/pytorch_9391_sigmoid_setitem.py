# source: https://github.com/pytorch/pytorch/issues/9391
# edits: REPL prompts removed; the working case first, then the failing one
import torch

a = torch.tensor([1,2,3.], requires_grad = True)
b = 1/((-a).exp()+1)
b[1]= 2
b.sum().backward()
print(a.grad)

a = torch.tensor([1,2,3.], requires_grad = True)
b = a.sigmoid()
b[1]= 2
b.sum().backward()
