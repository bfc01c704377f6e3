# source: https://isolution.pro/pl/q/so70246575/funkcja-wsteczna-w-pytorch
# edits: the answer's two listings, one after the other; before the second, the 2-by-3 out its text speaks of (out = a * a)
# gathered: 2026-12-07b
import torch
a = torch.tensor([[1,2,3],[4,5,6]], dtype=torch.float, requires_grad=True)
for i in range(2):
  for j in range(3):
    out = a[i,j] * a[i,j]
    out.backward()
print(a.grad)

out = a * a
out.backward(torch.ones(2,3))
print(a.grad)
