# source: https://github.com/affaan-m/ECC/pull/3122
# kind: missing-zero-grad
# edits: the chapter's pretraining loop (nested: epochs, then batches) on a tiny model
import torch
import torch.nn as nn


def calc_loss_batch(x, y, model):
    return nn.functional.cross_entropy(model(x), y)


torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)
train_loader = [(torch.randn(2, 4), torch.tensor([0, 2])) for _ in range(2)]
for epoch in range(2):
    model.train()
    for x, y in train_loader:
        loss = calc_loss_batch(x, y, model)
        loss.backward(); optimizer.step()
