# source: https://github.com/psh01087/Vid-ODE/issues/6
# edits: a tiny generator and discriminator, their optimizers and the two adversarial losses stand in for main.py's; the posted order (G first, then D) as written
import torch
import torch.nn as nn
import torch.nn.functional as F

netG = nn.Sequential(nn.Linear(4, 6), nn.Tanh())
netD = nn.Sequential(nn.Linear(6, 1))
optimizer_netG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optimizer_netD = torch.optim.Adam(netD.parameters(), lr=1e-3)

real = torch.randn(3, 6)
fake = netG(torch.randn(3, 4))
loss_netG = F.softplus(-netD(fake)).mean()
loss_netD = F.softplus(-netD(real)).mean() + F.softplus(netD(fake.detach())).mean()

# Train G
optimizer_netG.zero_grad()
loss_netG.backward()
optimizer_netG.step()

# Train D
optimizer_netD.zero_grad()
loss_netD.backward()
optimizer_netD.step()
