# source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261
# edits: none (the post's first listing)
# gathered: 2026-12-07b
import torch
a = torch.tensor(0.0)
b = torch.tensor(0.0)
a.requires_grad = True
b.requires_grad = True
cosa = torch.cos(a)
cosb = torch.cos(b)
y1 = cosa + cosb
y2 = torch.tensor([
cosa, cosb
])
y2.sum().backward() # RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
print("a has grad ", a.requires_grad)
print("a grad", a.grad)
