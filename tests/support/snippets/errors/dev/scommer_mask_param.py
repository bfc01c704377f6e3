# source: https://github.com/NeurAI-Lab/SCoMMER/issues/1
# kind: leaf-inplace
# edits: a sparse mask kept as a parameter, its smallest entries zeroed by index assignment;
#   tiny sizes
import torch
import torch.nn as nn

torch.manual_seed(0)
mask = nn.Parameter(torch.rand(6))
weight = torch.randn(6)
idx = mask.argsort()[:2]
mask[idx] = 0.0
loss = (mask * weight).sum()
loss.backward()
