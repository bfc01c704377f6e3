# A forum post's imports, most never used: NumPy and pyplot came along out of habit.
import numpy as np
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
optimizer = optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(8, 3)
y = torch.randn(8, 1)
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("losses", [round(v, 4) for v in losses])
