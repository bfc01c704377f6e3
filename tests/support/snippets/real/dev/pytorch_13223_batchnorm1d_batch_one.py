# source: https://github.com/pytorch/pytorch/issues/13223
# edits: imports added; the two cases in its order (the first stops the script)
import torch
import torch.nn as nn

m = nn.BatchNorm1d(100, affine=False)
input = torch.randn(1, 100)
output = m(input)
##ValueError: Expected more than 1 value per channel when training, got input size [1, 100]

input = torch.randn(2, 100)
output = m(input)
