# source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
# edits: the answer's listings in the order posted, with the import added
# gathered: 2026-12-07b
import torch

w = torch.tensor([1.0, 2.0, 3.0]) # leaf variable
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True) # also leaf variable
y = x + 1 # not a leaf variable

x += 1 # in-place
y = x + 1 # not in place

x2 = x.clone() # clone the variable
x2 += 1 # in-place operation

with torch.no_grad():
    x += 1
