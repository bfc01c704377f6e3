# source: https://androidkt.com/how-loss-backward-optimizer-step-and-optimizer-zero_grad-related-in-pytorch/
# edits: the article's later steps (an MSE loss, backward, an SGD step) appended to its first listing
# gathered: 2026-12-07
import torch
from torch import optim
in_dim, out_dim = 5, 2
inputs = torch.randn(in_dim)
target = torch.tensor([1,2],dtype=torch.float32)
model = torch.nn.Linear(in_dim, out_dim, bias=True)
out = model(inputs)
optimizer = optim.SGD(model.parameters(), lr=0.01)
loss = torch.nn.functional.mse_loss(out, target)
optimizer.zero_grad()
loss.backward()
print(model.weight.grad)
optimizer.step()
