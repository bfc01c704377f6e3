# Decaying the learning rate by hand, as older tutorials do, and printing it every epoch.
import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def adjust_learning_rate(optimizer, epoch, base_lr=0.1):
    lr = base_lr * (0.5 ** (epoch // 2))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


torch.manual_seed(1)
model = Net()
criterion = nn.MSELoss()
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(16, 4)
y = torch.randn(16, 1)
for epoch in range(5):
    adjust_learning_rate(optimizer, epoch)
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']}")
for g in optimizer.param_groups:
    g["lr"] = g["lr"] * 0.1
    g["momentum"] *= 0.5
optimizer.zero_grad()
criterion(model(x), y).backward()
optimizer.step()
print(model.fc1.weight.grad.shape, optimizer.param_groups[0]["lr"], len(optimizer.param_groups[0]["params"]))
