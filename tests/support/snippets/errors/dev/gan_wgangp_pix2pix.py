# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/439
# kind: backward-twice
# edits: the pix2pix model's forward/backward_D/optimize_parameters as plain functions on tiny
#   linear nets; the gradient penalty as a plain function; two critic steps per generator step
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Linear(4, 4)
netD = nn.Sequential(nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 1))
opt_D = torch.optim.Adam(netD.parameters(), lr=1e-3)
opt_G = torch.optim.Adam(netG.parameters(), lr=1e-3)
real_A, real_B = torch.randn(3, 4), torch.randn(3, 4)


def cal_gradient_penalty(netD, real, fake):
    alpha = torch.rand(real.shape[0], 1)
    interp = alpha * real + (1 - alpha) * fake
    interp.requires_grad_(True)
    out = netD(interp)
    grads = torch.autograd.grad(out.sum(), interp, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


fake_B = netG(real_A)
for _ in range(2):  # updating D several times before G
    opt_D.zero_grad()
    fake_AB = torch.cat((real_A, fake_B), 1)
    pred_fake = netD(fake_AB.detach())
    real_AB = torch.cat((real_A, real_B), 1)
    pred_real = netD(real_AB)
    gradient_penalty = cal_gradient_penalty(netD, real_AB, fake_AB)
    loss_D = pred_fake.mean() - pred_real.mean() + gradient_penalty
    loss_D.backward()
    opt_D.step()
