# Old-style initialisation and manual SGD through .data, as many tutorials still write it.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)
        self.fc1.weight.data.normal_(0, 0.1)
        self.fc1.bias.data.fill_(0)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))


def sgd_step(model, learning_rate):
    for p in model.parameters():
        p.data -= learning_rate * p.grad.data


torch.manual_seed(3)
model = Net()
model.fc2.weight.data.uniform_(-0.5, 0.5)
x = torch.randn(6, 3)
y = torch.randn(6, 1)
learning_rate = 0.05
for t in range(3):
    loss = ((model(x) - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    sgd_step(model, learning_rate)
    print(t, round(loss.item(), 5), model.fc1.bias.data.abs().sum().item() > 0)
