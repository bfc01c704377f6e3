# source: https://github.com/XPixelGroup/BasicSR/issues/17
# edits: a tiny netD/netG, var_ref, fake_H and the optimizer stand in for the model's attributes (self. dropped); the D loss and step added after the quoted lines
import torch
import torch.nn as nn

netG = nn.Linear(4, 4)
netD = nn.Linear(4, 1)
var_ref = torch.randn(2, 4)
fake_H = netG(torch.randn(2, 4))
wd_D = 0
optimizer_D = torch.optim.Adam(netD.parameters(), lr=1e-4, \
                weight_decay=wd_D, betas=(0.9, 0.999))

pred_d_real = netD(var_ref)
pred_d_fake = netD(fake_H.detach())  # detach to avoid BP to G
l_d_total = (pred_d_fake - pred_d_real).mean()
l_d_total.backward()
optimizer_D.step()
print(netG.weight.grad)
