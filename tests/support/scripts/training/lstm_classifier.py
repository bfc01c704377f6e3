# An LSTM classifier over embedded tokens, two layers
import torch
from torch import nn

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embedding(tokens))
        return self.fc(out[:, -1, :])


model = TextClassifier(30, 8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, labels = torch.randint(0, 30, (4, 6)), torch.randint(0, 2, (4,))
for step in range(4):
    optimizer.zero_grad()
    loss = nn.CrossEntropyLoss()(model(tokens), labels)
    loss.backward()
    optimizer.step()
