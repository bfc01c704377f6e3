# Sequence classifier: an LSTM whose last output goes through a linear layer
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):
    def __init__(self, input_dim, hidden_dim, n_classes):
        super(LSTMClassifier, self).__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, batch_first=True)
        self.head = nn.Linear(hidden_dim, n_classes)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1, :])


torch.manual_seed(1)
model = LSTMClassifier(3, 6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
data = [(torch.randn(4, 5, 3), torch.randint(0, 2, (4,))) for _ in range(3)]
for epoch in range(2):
    total = 0.0
    for seq, label in data:
        opt.zero_grad()
        logits = model(seq)
        loss = loss_fn(logits, label)
        loss.backward()
        opt.step()
        total += loss.item()
    print("epoch {}: {:.4f}".format(epoch, total / len(data)))
