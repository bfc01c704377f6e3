# source: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
# kind: missing-zero-grad
# edits: training_loop_encoder's discriminator update on tiny nets; optimizer_D.zero_grad()
#   missing, as asked in the issue
import torch
import torch.nn as nn

torch.manual_seed(0)
E = nn.Linear(6, 3)
D = nn.Linear(6, 1)
G = nn.Linear(3, 6)
optimizer_D = torch.optim.Adam(D.parameters(), lr=1e-4)
for it in range(3):
    x = torch.randn(4, 6)
    with torch.no_grad():
        x_rec = G(E(x))
    loss_D = nn.functional.softplus(D(x_rec)).mean() + nn.functional.softplus(-D(x)).mean()
    loss_D.backward()
    optimizer_D.step()
