# Xavier/Kaiming initialisation, LeakyReLU, RMSprop and a StepLR schedule
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR

torch.manual_seed(1)
fc1 = nn.Linear(6, 12)
fc2 = nn.Linear(12, 1)
nn.init.kaiming_normal_(fc1.weight, nonlinearity="leaky_relu")
nn.init.zeros_(fc1.bias)
nn.init.xavier_uniform_(fc2.weight, gain=nn.init.calculate_gain("linear"))
nn.init.constant_(fc2.bias, 0.1)
act = nn.LeakyReLU(0.1)

params = list(fc1.parameters()) + list(fc2.parameters())
optimizer = optim.RMSprop(params, lr=0.01, alpha=0.9)
scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
x = torch.randn(32, 6)
y = torch.randn(32, 1)
for epoch in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(fc2(act(fc1(x))), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(epoch, loss.item(), scheduler.get_last_lr())
