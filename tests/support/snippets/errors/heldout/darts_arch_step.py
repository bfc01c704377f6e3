# source: https://github.com/quark0/darts/issues/109
# kind: version-counter
# edits: the architect's alpha step and the weights' step in one loop on a tiny mixed op; the
#   logits computed once before the architecture step, as in the failing run
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
stem = nn.Linear(4, 4)
ops = nn.ModuleList([nn.Linear(4, 3), nn.Linear(4, 3)])
alphas = torch.zeros(2, requires_grad=True)
arch_opt = torch.optim.Adam([alphas], lr=3e-4)
optimizer = torch.optim.SGD(list(stem.parameters()) + list(ops.parameters()), lr=0.025)
criterion = nn.CrossEntropyLoss()

for step in range(2):
    x, target = torch.randn(4, 4), torch.tensor([0, 1, 2, 0])
    w = F.softmax(alphas, dim=0)
    h = torch.relu(stem(x))
    logits = sum(wi * op(h) for wi, op in zip(w, ops))
    optimizer.zero_grad()
    loss = criterion(logits, target)
    loss.backward(retain_graph=True)
    optimizer.step()
    arch_opt.zero_grad()
    criterion(logits, target).backward()
    arch_opt.step()
