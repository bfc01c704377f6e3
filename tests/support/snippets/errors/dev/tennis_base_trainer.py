# source: https://github.com/yastrebksv/TennisCourtDetector/issues/7
# kind: missing-zero-grad
# edits: base_trainer.train on a tiny heatmap regressor and random batches
import torch
import torch.nn as nn


def train(model, train_loader, optimizer, criterion, max_iters):
    model.train()
    losses = []
    for iter_id, batch in enumerate(train_loader):
        out = model(batch[0])
        loss = criterion(torch.sigmoid(out), batch[1])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if iter_id > max_iters:
            break
    return sum(losses) / len(losses)


torch.manual_seed(0)
model = nn.Linear(6, 6)
loader = [(torch.randn(2, 6), torch.rand(2, 6)) for _ in range(3)]
train(model, loader, torch.optim.Adam(model.parameters()), nn.MSELoss(), 10)
