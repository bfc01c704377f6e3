# source: https://github.com/eriklindernoren/PyTorch-GAN/issues/6
# kind: backward-twice
# edits: wgan.py's loop on random images and tiny linear nets; the typo kept: the critic is
#   trained on fake_imgs without .detach(), then the generator's loss backpropagates through it
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(3, 8), nn.Tanh())
discriminator = nn.Linear(8, 1)
optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=5e-5)

for i in range(2):
    real_imgs = torch.randn(4, 8)
    z = torch.randn(4, 3)
    fake_imgs = generator(z)
    optimizer_D.zero_grad()
    loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
    loss_D.backward()
    optimizer_D.step()
    optimizer_G.zero_grad()
    loss_G = -torch.mean(discriminator(fake_imgs))
    loss_G.backward()
    optimizer_G.step()
