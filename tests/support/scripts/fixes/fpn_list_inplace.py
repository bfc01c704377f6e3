# Feature pyramid: top-down pathway adds into a list of lateral maps in place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
convs = nn.ModuleList([nn.Conv2d(4, 4, 1) for _ in range(3)])
feats = [torch.randn(1, 4, 16 // 2**i, 16 // 2**i) for i in range(3)]

laterals = [torch.relu(conv(f)) for conv, f in zip(convs, feats)]
for i in range(len(laterals) - 1, 0, -1):
    laterals[i - 1] += F.interpolate(laterals[i], scale_factor=2.0, mode="nearest")
loss = sum(l.mean() for l in laterals)
loss.backward()
print(convs[0].weight.grad.norm())
