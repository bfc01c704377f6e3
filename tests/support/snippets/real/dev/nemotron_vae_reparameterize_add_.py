# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
# edits: a forum post ("VAE Example Reparametrization", 2019) as quoted there; the posted method as a function; mu and logvar from a tiny encoder; a KL + reconstruction loss and backward added
# gathered: 2026-12-07
import torch

def reparameterize(mu, logvar):
    std = torch.exp(0.5 * logvar)
    eps = torch.randn_like(std)
    return eps.mul(std).add_(mu)

encoder = torch.nn.Linear(6, 4)
decoder = torch.nn.Linear(2, 6)
x = torch.randn(3, 6)
h = encoder(x)
mu, logvar = h[:, :2], h[:, 2:]
z = reparameterize(mu, logvar)
recon = decoder(z)
KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
loss = torch.nn.functional.mse_loss(recon, x, reduction='sum') + KLD
loss.backward()
