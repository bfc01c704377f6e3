# DCGAN-style loop: one D(fake) serves both losses, and D steps in between
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
netD = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
optimizerD = torch.optim.SGD(netD.parameters(), lr=0.01)
optimizerG = torch.optim.SGD(netG.parameters(), lr=0.01)
criterion = nn.BCELoss()

for i in range(2):
    fake = netG(torch.randn(4, 3))
    netD.zero_grad()
    output = netD(fake)
    errD = criterion(netD(torch.randn(4, 2)), torch.ones(4, 1)) + criterion(output, torch.zeros(4, 1))
    errD.backward(retain_graph=True)
    optimizerD.step()
    netG.zero_grad()
    errG = criterion(output, torch.ones(4, 1))
    errG.backward()
    optimizerG.step()
