# Residual blocks in a ModuleList, a learnable scale Parameter and a buffer
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + torch.tanh(self.fc(self.norm(x)))


class ResNet(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.scale = nn.Parameter(torch.ones(dim))
        self.register_buffer("offset", torch.zeros(dim))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x * self.scale + self.offset


torch.manual_seed(0)
net = ResNet(4, depth=3)
x = torch.randn(5, 4)
target = torch.randn(5, 4)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    opt.zero_grad()
    loss = ((net(x) - target) ** 2).mean()
    loss.backward()
    opt.step()
print([name for name, p in net.named_parameters()][:3], len(list(net.parameters())))
print("final loss %.5f" % loss.item())
