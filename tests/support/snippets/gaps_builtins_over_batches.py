# A first look at a DataLoader's batch, and Python's own builtins over the results.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(2)
data = TensorDataset(torch.randn(12, 3), torch.randn(12, 1))
loader = DataLoader(data, batch_size=4, shuffle=False)
xb, yb = next(iter(loader))
print(xb.shape, yb.shape)
model = nn.Linear(3, 1)
losses = []
for i, (inputs, labels) in enumerate(loader):
    model.zero_grad()
    loss = ((model(inputs) - labels) ** 2).mean()
    loss.backward()
    losses.append((f"batch{i}", loss.item()))
worst = sorted(losses, key=lambda kv: kv[1], reverse=True)
print([name for name, _ in worst])
print(list(map(lambda kv: round(kv[1], 3), losses)))
by_name = dict(losses)
print(list(filter(lambda kv: kv[1] > 0.5, by_name.items())), any(v > 10 for v in by_name.values()))
print(all(p.grad is not None for p in model.parameters()), max(by_name, key=lambda k: by_name[k]) == worst[0][0])
