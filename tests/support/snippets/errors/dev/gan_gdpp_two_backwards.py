# source: https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83
# kind: backward-twice
# edits: base_GAN's generator step reduced to tiny linear nets; the GDPP loss as a plain
#   function of the discriminator's features
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Linear(4, 6)
netD = nn.Linear(6, 3)
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)


def gdpp_loss(phi_fake, phi_real):
    return ((phi_fake.mean(0) - phi_real.mean(0)) ** 2).sum()


inputLatent = torch.randn(5, 4)
real = torch.randn(5, 6)
optG.zero_grad()
predFakeG = netD(netG(inputLatent))
lossGFake = -predFakeG.mean()
lossGFake.backward()
lossGDPP = gdpp_loss(predFakeG, netD(real))
lossGDPP.backward()
optG.step()
