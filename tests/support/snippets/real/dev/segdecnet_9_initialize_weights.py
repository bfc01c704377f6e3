# source: https://github.com/seanXYZ/SegDecNet/issues/9
# edits: imports added; a small conv model to initialise, and one training step after the posted function
import torch
import torch.nn as nn

def initialize_weights(*models):
    for model in models:
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight.data, nonlinearity='relu')
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1.)
                m.bias.data.fill_(1e-4)
            elif isinstance(m, nn.Linear):
                m.weight.data.normal_(0.0, 0.0001)
                m.bias.data.zero_()

net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 2))
initialize_weights(net)
out = net(torch.randn(3, 1, 6, 6))
loss = nn.functional.cross_entropy(out, torch.tensor([0, 1, 1]))
loss.backward()
print(net[4].weight.grad.abs().sum())
