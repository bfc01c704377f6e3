# source: https://github.com/pytorch/vision/issues/807
# kind: version-counter
# edits: the pre-activation order the maintainer describes (relu, then out += identity) in a
#   tiny block, trained for two steps
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(4, 4)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.conv(x)
        out = self.relu(out)
        out += identity
        return out


block = Block()
opt = torch.optim.SGD(block.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    loss = block(torch.randn(2, 4)).pow(2).sum()
    loss.backward()
    opt.step()
