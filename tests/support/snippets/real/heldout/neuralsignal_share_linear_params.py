# source: https://neuralsignal.medium.com/sharing-parameters-across-pytorch-modules-065e4967a614
# edits: hidden_size and output_size set; a forward through both layers, a loss and backward added after the post's listing
# gathered: 2026-12-07b
import torch
import torch.nn as nn

hidden_size, output_size = 4, 2

linear1 = nn.Linear(hidden_size, output_size)
# Share the weight and bias of linear2 with linear3
linear2 = nn.Linear(hidden_size, output_size)
linear2.weight = linear1.weight
linear2.bias = linear1.bias

x = torch.randn(3, hidden_size)
loss = (linear1(x) + linear2(x)).pow(2).mean()
loss.backward()
