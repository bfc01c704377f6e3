# source: https://github.com/pytorch/examples/pull/779
# kind: leaf-inplace
# edits: word_language_model's manual update on a tiny linear model (p.add_ with the old
#   (scalar, tensor) signature written as alpha=)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
criterion = nn.MSELoss()
lr = 20
for batch in range(2):
    data, targets = torch.randn(3, 4), torch.randn(3, 2)
    model.zero_grad()
    loss = criterion(model(data), targets)
    loss.backward()
    for p in model.parameters():
        p.add_(p.grad, alpha=-lr)
