# source: https://github.com/pytorch/examples/issues/584
# edits: tiny netG/netD (Linear layers), criterion, optimizers, real_label/fake_label, nz, device and one random batch stand in for the DCGAN example's setup and data loader; the loop body is the issue's, completed with the example's generator step
import torch
import torch.nn as nn
import torch.optim as optim

device = torch.device("cpu")
nz = 4
real_label = 1.
fake_label = 0.
netG = nn.Sequential(nn.Flatten(), nn.Linear(nz, 6), nn.Tanh())
netD = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid(), nn.Flatten(0))
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
dataloader = [(torch.randn(3, 6), torch.zeros(3))]

for i, data in enumerate(dataloader, 0):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        # train with real
        netD.zero_grad()
        real_cpu = data[0].to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, device=device)

        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        # train with fake
        noise = torch.randn(batch_size, nz, 1, 1, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
