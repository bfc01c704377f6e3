# source: https://github.com/jacobgil/pytorch-grad-cam/issues/417
# kind: backward-twice
# edits: the class-activation loop over generated images written out by hand (one backward per
#   image's score), generator and critic as tiny nets
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(3, 5), nn.Tanh())
netD = nn.Linear(5, 1)
z_noise = torch.randn(3, 3)
x_fake = netG(z_noise)
for i in range(3):
    netD.zero_grad()
    score = netD(x_fake)[i].sum()
    score.backward()
