# source: https://taourl.com/read-2445510.html
# edits: the operator and call parentheses the page lost restored (x * 2, y.sum(), z.backward())
# gathered: 2026-12-07
import torch
x = torch.tensor([1.0], requires_grad=True)
y = x * 2
y.add_(1) # Inplace operation
z = y.sum()
z.backward()
print(x.grad)
