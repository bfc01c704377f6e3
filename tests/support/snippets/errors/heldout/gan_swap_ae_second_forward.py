# source: https://github.com/rosinality/swapping-autoencoder-pytorch/issues/12
# kind: backward-twice
# edits: train.py's loop with the second forward pass taken out (what the question proposes),
#   encoder/generator/discriminator as tiny linear nets
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(6, 4)
generator = nn.Linear(4, 6)
discriminator = nn.Linear(6, 1)
g_optim = torch.optim.Adam(list(encoder.parameters()) + list(generator.parameters()), lr=2e-3)
d_optim = torch.optim.Adam(discriminator.parameters(), lr=2e-3)

real_img1 = torch.randn(2, 6)
structure1 = encoder(real_img1)
fake_img1 = generator(structure1)
fake_pred = discriminator(fake_img1)
real_pred = discriminator(real_img1)
d_loss = nn.functional.softplus(fake_pred).mean() + nn.functional.softplus(-real_pred).mean()
d_optim.zero_grad()
d_loss.backward()
d_optim.step()
fake_pred = discriminator(fake_img1)
g_loss = nn.functional.softplus(-fake_pred).mean() + (fake_img1 - real_img1).abs().mean()
g_optim.zero_grad()
g_loss.backward()
g_optim.step()
