# source: https://github.com/EPFL-LCN/pub-illing2021-neurips/issues/3
# kind: view-inplace
# edits: the multi-view output (split) of one activation written in place, on CPU instead of
#   the broadcast across GPUs; tiny sizes
import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.Linear(4, 8)
h = layer(torch.randn(2, 4))
parts = h.split(4, dim=1)
first = parts[0]
first.mul_(0.5)
loss = (first.sum() + parts[1].sum())
loss.backward()
