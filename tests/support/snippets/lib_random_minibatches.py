# Manual mini-batches: indices shuffled with the random module, Softplus regression
import random
import torch
import torch.nn as nn

random.seed(7)
torch.manual_seed(7)
X = torch.randn(30, 2)
y = X.sum(dim=1, keepdim=True)
model = nn.Sequential(nn.Linear(2, 8), nn.Softplus(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
indices = list(range(len(X)))
batch_size = 10
for epoch in range(2):
    random.shuffle(indices)
    for start in range(0, len(indices), batch_size):
        batch = torch.tensor(indices[start : start + batch_size])
        xb, yb = X[batch], y[batch]
        loss = nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("epoch", epoch, loss.item(), random.randint(1, 100))
