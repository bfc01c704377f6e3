# an nn.ReLU(inplace=True) overwrites the sigmoid's output that its backward needs
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(6, 1)

    def forward(self, x):
        h = torch.sigmoid(self.fc1(x))
        return self.fc2(self.act(h))


net = Net()
loss = net(torch.randn(3, 4)).pow(2).mean()
loss.backward()
