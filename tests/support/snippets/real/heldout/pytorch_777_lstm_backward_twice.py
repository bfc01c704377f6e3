# source: https://github.com/pytorch/pytorch/issues/777
# edits: .cuda() calls removed (CPU only)
import torch
import torch.nn as nn
from torch.autograd import Variable

lstm = nn.LSTM(2, 3, 1, bidirectional=True)

input = torch.ones(4, 5, 2)  # [T, b, i]
input = Variable(input, requires_grad=True)
output, _ = lstm(input)
output.backward(torch.ones(output.size()))
output.backward(torch.ones(output.size()))
