# source: https://github.com/bamos/densenet.pytorch/issues/21
# edits: the posted loop inside the __init__ of a small model (conv, batch norm, linear) it initialises, and one backward
import math
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3 * 4 * 4, 2)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()
            elif isinstance(m, nn.Linear):
                m.bias.data.zero_()

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))

model = Net()
model(torch.randn(2, 1, 6, 6)).sum().backward()
print(model.conv.weight.grad.shape)
