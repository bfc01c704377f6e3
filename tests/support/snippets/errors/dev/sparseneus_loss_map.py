# source: https://github.com/xxlong0/SparseNeuS/issues/42
# kind: non-scalar
# edits: the runner's loss left as a per-ray map (the error's cause) on tiny tensors
import torch
import torch.nn as nn

torch.manual_seed(0)
sdf_net = nn.Linear(3, 1)
optimizer = torch.optim.Adam(sdf_net.parameters(), lr=1e-3)
for it in range(2):
    rays = torch.randn(8, 3)
    color_error = (sdf_net(rays) - 0.5).abs()
    loss = color_error * 1.0 + 0.1 * sdf_net(rays) ** 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
