# source: https://discuss.pytorch.org/t/best-practice-for-freezing-layers/58156
# edits: a small nn.Sequential, a batch and one training step added around the question's two listings
# gathered: 2026-12-07b
import torch
import torch.nn as nn
from torch import optim

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

for parameter in model.parameters():
    parameter.requires_grad = False
for parameter in model[-1].parameters():
    parameter.requires_grad = True
optimizer = optim.SGD(model.parameters(), lr=1e0)

optimizer = optim.SGD(model[-1].parameters(), lr=1e0)

inputs = torch.randn(3, 4)
targets = torch.randn(3, 2)
optimizer.zero_grad()
loss = nn.functional.mse_loss(model(inputs), targets)
loss.backward()
optimizer.step()
