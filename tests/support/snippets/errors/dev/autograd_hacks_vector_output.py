# source: https://github.com/cybertronai/autograd-hacks/issues/8
# kind: non-scalar
# edits: a model with a vector output per example, backward called on the output itself
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
output = model(torch.randn(5, 4))
output.backward()
