# source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56
# kind: silent-no-grad-fn
# edits: train.py's step on a tiny model whose head hands back its output's .data (the cut), with
#   the poster's `loss.requires_grad = True` after the criterion: nothing raises, nothing learns
import torch
import torch.nn as nn


class MetricHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, feature):
        return self.fc(feature).data


torch.manual_seed(0)
model = nn.Linear(6, 4)
metric_fc = MetricHead()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(list(model.parameters()) + list(metric_fc.parameters()), lr=0.1)
for i in range(2):
    data_input, label = torch.randn(5, 6), torch.tensor([0, 1, 2, 0, 1])
    feature = model(data_input)
    output = metric_fc(feature)
    loss = criterion(output, label)
    loss.requires_grad = True
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
