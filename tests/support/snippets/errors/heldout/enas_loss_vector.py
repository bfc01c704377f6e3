# source: https://github.com/carpedm20/ENAS-pytorch/issues/58
# kind: non-scalar
# edits: train_shared's loss from a criterion without reduction (as DataParallel's gather left
#   it), tiny shared model
import torch
import torch.nn as nn

torch.manual_seed(0)
shared = nn.Linear(5, 4)
ce = nn.CrossEntropyLoss(reduction="none")
shared_optim = torch.optim.SGD(shared.parameters(), lr=0.1)
for step in range(2):
    inputs, targets = torch.randn(3, 5), torch.tensor([0, 3, 1])
    loss = ce(shared(inputs), targets)
    shared_optim.zero_grad()
    loss.backward()
    shared_optim.step()
