# source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/142
# kind: version-counter
# edits: a cross-batch memory: the queue is read (without .clone()) against the current batch,
#   then the batch is enqueued in place before backward; tiny embedder
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
embedder = nn.Linear(6, 4)
optimizer = torch.optim.SGD(embedder.parameters(), lr=0.1)
queue = torch.zeros(8, 4)
ptr = 0
for step in range(2):
    emb = F.normalize(embedder(torch.randn(4, 6)), dim=1)
    l_pos = (emb * emb).sum(1, keepdim=True)
    l_neg = emb @ queue.t()
    sims = torch.cat([l_pos, l_neg], dim=1)
    queue[ptr:ptr + 4] = emb.detach()
    ptr = (ptr + 4) % 8
    loss = -torch.log_softmax(sims / 0.1, dim=1)[:, 0].mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
