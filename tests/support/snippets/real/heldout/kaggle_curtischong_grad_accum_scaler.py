# source: https://kaggle.curtischong.me/ml-concepts/gradient-accumulation
# edits: a tiny net, batch and optimizer; a GradScaler that is off on the CPU; the index typo batch[r] kept as written
# gathered: 2026-12-07
import torch
net = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler(enabled=False)
batch = torch.randn(4, 3)
batch_size = 4
optimizer.zero_grad()

for b in range(batch_size):
        r = batch[r] 
        loss = net(r)  # forward one subgraph 
        scaler.scale(loss).backward() #backward accumuate gradient

scaler.step(optimizer) #update net parameters
scaler.update()
