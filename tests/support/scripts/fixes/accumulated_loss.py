# "why does my loss need retain_graph?" - the loss is summed over batches and never reset
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
X, Y = torch.randn(12, 4), torch.randn(12, 1)

running_loss = 0.0
for batch in range(3):
    xb, yb = X[batch * 4 : batch * 4 + 4], Y[batch * 4 : batch * 4 + 4]
    loss = ((net(xb) - yb) ** 2).mean()
    running_loss += loss
    optimizer.zero_grad()
    running_loss.backward()
    optimizer.step()
print("done", running_loss)
