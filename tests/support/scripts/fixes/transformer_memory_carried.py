# Transformer-XL style memory: the last hidden states are kept for the next segment, with their graph
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
head = nn.Linear(8, 1)
optimizer = torch.optim.AdamW(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
segments, y = torch.randn(3, 2, 5, 8), torch.randn(2, 1)
memory = torch.zeros(2, 4, 8)
for step in range(3):
    out = layer(torch.cat([memory, segments[step]], dim=1))
    loss = nn.functional.mse_loss(head(out[:, -5:].mean(dim=1)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    memory = out[:, -4:]
