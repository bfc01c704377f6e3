# source: https://github.com/amdegroot/ssd.pytorch/issues/109
# edits: a tiny net and args stand in for the SSD model and the command line; the posted loop and optimizer line as written, then one step
import torch
import torch.nn as nn
import torch.optim as optim

class args:
    lr = 1e-3
    momentum = 0.9
    weight_decay = 5e-4

net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 3))

#Freeze weights 
for layer,param in enumerate(net.parameters()):
    if layer == 1 or layer == 2:
       param.requires_grad = False
    else:
        param.requires_grad = True

optimizer = optim.SGD(net.parameters(), lr=args.lr,momentum=args.momentum, weight_decay=args.weight_decay)
loss = net(torch.randn(1, 3, 8, 8)).mean()
loss.backward()
optimizer.step()
