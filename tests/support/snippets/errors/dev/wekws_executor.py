# source: https://github.com/wenet-e2e/wekws/pull/73
# kind: missing-zero-grad
# edits: kws/utils/executor.py's train() as a function over random batches, tiny model
import torch
import torch.nn as nn


def train(model, optimizer, data_loader):
    model.train()
    for batch_idx, (feats, target) in enumerate(data_loader):
        logits = model(feats)
        loss = nn.functional.cross_entropy(logits, target)
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = nn.Linear(5, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(3, 5), torch.tensor([0, 1, 0])) for _ in range(3)]
train(model, optimizer, batches)
