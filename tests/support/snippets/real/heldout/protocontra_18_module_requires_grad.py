# source: https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18
# edits: a tiny model with an outc layer stands in for the U-Net; self.model written as model; one backward added to see the effect
import torch
import torch.nn as nn

class UNetTiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.inc = nn.Linear(4, 4)
        self.outc = nn.Linear(4, 2)

    def forward(self, x):
        return self.outc(torch.relu(self.inc(x)))

model = UNetTiny()
model.outc.requires_grad = False
model(torch.randn(3, 4)).sum().backward()
print(model.outc.weight.grad is None)
