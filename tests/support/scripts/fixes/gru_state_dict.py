# a GRU cell whose state is kept in a dict between chunks of a sequence
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(2, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.05)
state = {"h": torch.zeros(1, 4)}
seq = torch.randn(3, 1, 2)
for t in range(3):
    state["h"] = cell(seq[t], state["h"])
    loss = head(state["h"]).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
