# A GRU sequence classifier
import torch
import torch.nn as nn

torch.manual_seed(0)


class GRUClassifier(nn.Module):
    def __init__(self, n_in, n_hidden, n_classes):
        super().__init__()
        self.gru = nn.GRU(n_in, n_hidden, batch_first=True)
        self.head = nn.Linear(n_hidden, n_classes)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


model = GRUClassifier(5, 12, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(6, 7, 5), torch.randint(0, 3, (6,))
for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
