# source: https://github.com/leftthomas/SRGAN/issues/89
# kind: version-counter
# edits: train.py's update of D then G on tiny linear nets; order kept: d_loss.backward,
#   optimizerD.step, then g_loss through the fake_out computed before the step
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Linear(4, 4)
netD = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.Linear(4, 1))
optimizerG = torch.optim.Adam(netG.parameters())
optimizerD = torch.optim.Adam(netD.parameters())

for _ in range(2):
    data, target = torch.randn(2, 4), torch.randn(2, 4)
    fake_img = netG(data)
    netD.zero_grad()
    real_out = netD(target).mean()
    fake_out = netD(fake_img).mean()
    d_loss = 1 - real_out + fake_out
    d_loss.backward(retain_graph=True)
    optimizerD.step()
    netG.zero_grad()
    g_loss = (1 - fake_out) + ((fake_img - target) ** 2).mean()
    g_loss.backward()
    optimizerG.step()
