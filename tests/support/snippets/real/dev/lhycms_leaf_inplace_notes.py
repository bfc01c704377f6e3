# source: https://github.com/lhycms/Deep_Learning_Notes
# edits: the notebook's cells 1, 2 and 3 as one script (it stops at the in-place error the notes show)
import torch

# For example

# leaf variable
w = torch.tensor([1.0, 2.0, 3.0])

# also leaf variable
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True) 

# not a leaf variable
y = x + 1

print(w.is_leaf, x.is_leaf, y.is_leaf)

x += 1  # in-place
y = x + 1 # not in place
