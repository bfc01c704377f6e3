# GAN where the generator steps before the discriminator's backward through the same D(fake)
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

for step in range(2):
    real = torch.randn(4, 2) + 3
    fake = G(torch.randn(4, 2))
    d_fake = D(fake)
    g_loss = bce(d_fake, torch.ones(4, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    d_loss = bce(D(real), torch.ones(4, 1)) + bce(d_fake, torch.zeros(4, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
