# A model whose forward changes a sigmoid output in place: backward fails, as on the forum
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        out = torch.sigmoid(self.lin(x))
        out += 1.0
        return out


torch.manual_seed(0)
model = Gate()
x = torch.randn(2, 3)
loss = model(x).pow(2).sum()
print("loss", round(loss.item(), 4))
loss.backward()
print("not reached")
