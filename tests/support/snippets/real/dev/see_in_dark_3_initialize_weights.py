# source: https://github.com/lavi135246/pytorch-Learning-to-See-in-the-Dark/issues/3
# edits: the posted method inside a small model (its indentation repaired), called from __init__; one backward
import torch
import torch.nn as nn

class SeeInDark(nn.Module):
    def __init__(self):
        super(SeeInDark, self).__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.up = nn.ConvTranspose2d(4, 3, 2, stride=2)
        self._initialize_weights()

    def forward(self, x):
        return self.up(torch.relu(self.conv1(x)))

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                m.weight.data.normal_(0.0, 0.02)
                if m.bias is not None:
                    m.bias.data.normal_(0.0, 0.02)
            if isinstance(m, nn.ConvTranspose2d):
                m.weight.data.normal_(0.0, 0.02)

model = SeeInDark()
out = model(torch.randn(1, 4, 4, 4))
loss = torch.abs(out - torch.zeros_like(out)).mean()
loss.backward()
print(model.conv1.weight.grad.norm())
