# validation-style no_grad block used for the training loss by mistake
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
with torch.no_grad():
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
loss.backward()
opt.step()
