# Custom blocks holding nested nn.Sequential, trained for five iterations
import torch
from torch import nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(dim, dim), nn.Tanh(), nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        )
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(x + self.body(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(3, 6)
        self.blocks = nn.Sequential(Block(6), Block(6))
        self.head = nn.Sequential(nn.Linear(6, 1))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(10, 3), torch.randn(10, 1)
for i in range(5):
    loss = ((net(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
