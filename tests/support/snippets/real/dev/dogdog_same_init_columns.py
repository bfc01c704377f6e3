# source: https://pages.dogdog.run/machine_learning/weight_initialization.html
# edits: the line breaks and indentation the page lost restored
#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# 2021-10-14 22:36
import torch

N = 3


class Layer(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.w = torch.nn.Parameter(
            torch.randn(out_features).repeat(in_features, 1).transpose(0, 1)
        )

    def forward(self, input):
        ret = torch.matmul(input, self.w)
        print("------")
        print(input)
        print(self.w)
        print(self.w.grad)
        print(ret)
        print("------")
        return ret


net = torch.nn.Sequential()
net.add_module("linear", Layer(N, N))
optimizer = torch.optim.SGD(net.parameters(), lr=1)
criterion = torch.nn.MSELoss()
x = torch.rand(1, N)
for i in range(3):
    print("epoch: %d" % (i))
    out = net(x)
    optimizer.zero_grad()
    loss = criterion(out, torch.ones((1, N)))
    loss.backward()
    optimizer.step()
