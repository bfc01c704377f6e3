# source: https://github.com/Jee-King/TSAN/issues/3
# kind: version-counter
# edits: the model's forward around line 103 (out = x, then out written in place) on a tiny
#   tensor; the issue's own fix is out = x.clone()
import torch
import torch.nn as nn

torch.manual_seed(0)
body = nn.Sequential(nn.Linear(4, 4), nn.Tanh())


def forward(inp):
    x = body(inp)
    out = x
    out[:, :2] *= 0.5
    return out


loss = forward(torch.randn(3, 4)).sum()
loss.backward()
