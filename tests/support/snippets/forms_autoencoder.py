# An autoencoder trained on mini-batches made with a list comprehension
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self, n_in=8, n_code=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 6), nn.ReLU(), nn.Linear(6, n_code))
        self.decoder = nn.Sequential(nn.Linear(n_code, 6), nn.ReLU(), nn.Linear(6, n_in))

    def forward(self, x):
        code = self.encoder(x)
        return self.decoder(code), code


torch.manual_seed(0)
data = torch.randn(24, 8)
batches = [data[i : i + 6] for i in range(0, len(data), 6)]
model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
for epoch in range(2):
    epoch_loss = 0.0
    for batch in batches:
        recon, code = model(batch)
        loss = criterion(recon, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item() * batch.shape[0]
    print("epoch %d loss %.5f" % (epoch, epoch_loss / len(data)))
codes = {i: c.tolist() for i, c in enumerate(model(data[:2])[1].detach())}
print(len(codes), sorted(codes)[-1])
