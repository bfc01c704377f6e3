# source: https://github.com/WisconsinAIVision/MaskPoint/issues/7
# kind: non-scalar
# edits: the per-device losses DataParallel returns as one vector, built by stacking two
#   replicas' losses; tiny model
import torch
import torch.nn as nn

torch.manual_seed(0)
base_model = nn.Linear(3, 1)
optimizer = torch.optim.AdamW(base_model.parameters(), lr=1e-3)
for idx in range(2):
    points = torch.randn(4, 3)
    halves = points.chunk(2)
    _loss = torch.stack([base_model(h).pow(2).mean() for h in halves])
    _loss.backward()
    optimizer.step()
    base_model.zero_grad()
