# One GAN training step: generator and discriminator classes, fake batch detached for D
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=4, out_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 8), nn.ReLU(), nn.Linear(8, out_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, in_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
G = Generator()
D = Discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCELoss()
real = torch.randn(8, 6)
ones = torch.ones(8, 1)
zeros = torch.zeros(8, 1)

for it in range(2):
    z = torch.randn(8, 4)
    fake = G(z)
    opt_d.zero_grad()
    d_loss = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = criterion(D(fake), ones)
    g_loss.backward()
    opt_g.step()
    print(f"it {it}: d {d_loss.item():.4f} g {g_loss.item():.4f}")
