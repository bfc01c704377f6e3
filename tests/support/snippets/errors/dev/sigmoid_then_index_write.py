# source: https://github.com/pytorch/pytorch/issues/9391
# kind: version-counter
# edits: the REPL lines as a script
import torch

a = torch.tensor([1, 2, 3.0], requires_grad=True)
b = a.sigmoid()
b[1] = 2
b.sum().backward()
print(a.grad)
