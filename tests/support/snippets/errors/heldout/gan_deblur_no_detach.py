# source: https://github.com/KupynOrest/DeblurGAN/issues/56
# kind: backward-twice
# edits: conditional_gan_model's forward, backward_D and backward_G as top-level statements on
#   tiny linear nets; the critic loss kept as in the model (fake_B without detach)
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
netD = nn.Linear(4, 1)
optimizer_D = torch.optim.Adam(netD.parameters(), lr=1e-4)
optimizer_G = torch.optim.Adam(netG.parameters(), lr=1e-4)

for step in range(2):
    real_A, real_B = torch.randn(2, 4), torch.randn(2, 4)
    fake_B = netG(real_A)
    optimizer_D.zero_grad()
    loss_D = netD(fake_B).mean() - netD(real_B).mean()
    loss_D.backward()
    optimizer_D.step()
    optimizer_G.zero_grad()
    loss_G = -netD(fake_B).mean() + ((fake_B - real_B) ** 2).mean()
    loss_G.backward()
    optimizer_G.step()
