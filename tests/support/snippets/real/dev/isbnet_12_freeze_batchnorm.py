# source: https://github.com/VinAIResearch/ISBNet/issues/12
# edits: a small model with BatchNorm1d and a batch of one stand in for ISBNet's; the posted loop as written, then one training step
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
model.train()
for m in model.modules():
      if isinstance(m, nn.BatchNorm1d):
           m.eval()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(1, 6)).pow(2).mean()
loss.backward()
optimizer.step()
print(model[1].running_mean)
