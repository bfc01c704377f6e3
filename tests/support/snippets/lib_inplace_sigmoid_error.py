# "modified by an inplace operation": sigmoid's output changed before backward
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.rand(8, 1)), batch_size=4)
lin = nn.Linear(3, 1)
for xb, yb in loader:
    out = torch.sigmoid(lin(xb))
    out += 0.1
    loss = nn.functional.binary_cross_entropy(out.clamp(0, 1), yb)
    loss.backward()
