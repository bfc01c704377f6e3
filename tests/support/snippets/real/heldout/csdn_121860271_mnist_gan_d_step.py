# source: https://blog.csdn.net/allrubots/article/details/121860271
# edits: a tiny G and D, BCE_loss, a batch x, noise z and display_step stand in for the post's MNIST GAN; the posted discriminator step runs once
# gathered: 2026-12-07b
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh())
D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
D_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
BCE_loss = nn.BCELoss()
display_step = 500
mean_D_loss = 0
x = torch.randn(5, 6)
z = torch.randn(5, 4)

D_optimizer.zero_grad() 
fake = G(z)  

d_fake_res = D(fake.detach()) 
d_fake_loss = BCE_loss(d_fake_res,torch.zeros_like(d_fake_res)) 
d_real_res = D(x)  # shape : torch.Size([128,1])
d_real_loss = BCE_loss(d_real_res,torch.ones_like(d_real_res)) 
d_loss = (d_fake_loss + d_real_loss)/2

mean_D_loss += d_loss.item() / display_step
d_loss.backward()
D_optimizer.step() 
