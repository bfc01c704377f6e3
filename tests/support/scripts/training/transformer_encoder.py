# A TransformerEncoderLayer regression, three steps
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
head = nn.Linear(8, 1)
params = list(layer.parameters()) + list(head.parameters())
optimizer = torch.optim.AdamW(params, lr=1e-3)
x, y = torch.randn(2, 5, 8), torch.randn(2, 1)
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(head(layer(x).mean(dim=1)), y)
    loss.backward()
    optimizer.step()
