# source: https://github.com/PingoLH/FCHarDNet/issues/61
# kind: leaf-inplace
# edits: test.py's weight transfer into a fresh conv, tiny sizes
import torch
import torch.nn as nn

torch.manual_seed(0)
cconv = nn.Conv2d(2, 2, 3)
W = torch.randn(2, 2, 3, 3)
cconv.weight[:, :, :, :] = W[:, :, :, :]
out = cconv(torch.randn(1, 2, 5, 5))
out.sum().backward()
