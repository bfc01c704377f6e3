# WGAN-GP gradient penalty with torch.autograd.grad
import torch
import torch.nn as nn
from torch.autograd import grad

torch.manual_seed(0)
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
real = torch.randn(8, 2)
fake = torch.randn(8, 2) + 1.0

alpha = torch.rand(8, 1)
interpolates = alpha * real + (1 - alpha) * fake
interpolates.requires_grad_(True)
d_interpolates = D(interpolates)
gradients = grad(
    outputs=d_interpolates,
    inputs=interpolates,
    grad_outputs=torch.ones_like(d_interpolates),
    create_graph=True,
    retain_graph=True,
)[0]
gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()

d_loss = D(fake).mean() - D(real).mean() + 10 * gradient_penalty
d_loss.backward()
print("penalty", gradient_penalty.item(), "loss", d_loss.item())
