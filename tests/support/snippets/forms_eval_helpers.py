# Train and evaluate helpers: keyword arguments, a no_grad evaluation function, a static method
import torch
import torch.nn as nn


class Metrics:
    @staticmethod
    def accuracy(logits, labels):
        return (logits.argmax(dim=1) == labels).float().mean().item()


def train_epoch(model, data, optimizer, loss_fn, *, clip=None):
    model.train()
    total = 0.0
    for x, y in data:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(data)


@torch.no_grad()
def evaluate(model, data):
    model.eval()
    scores = [Metrics.accuracy(model(x), y) for x, y in data]
    return sum(scores) / len(scores)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(2):
    loss = train_epoch(model, data, optimizer, loss_fn, clip=1.0)
    acc = evaluate(model, data)
    print(f"epoch {epoch}: loss={loss:.4f} acc={acc:.3f}")
