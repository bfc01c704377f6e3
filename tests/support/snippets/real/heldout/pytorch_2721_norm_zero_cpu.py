# source: https://github.com/pytorch/pytorch/issues/2721
# edits: the CUDA half of the report removed (CPU only)
import torch
a = torch.FloatTensor((5,5))
a.zero_()

# Calculate norm  on CPU
v = torch.autograd.Variable(a, requires_grad=True)
n = v.norm()
n.backward()
print(v.grad) # Variable containing: nan nan [torch.FloatTensor of size 2]
