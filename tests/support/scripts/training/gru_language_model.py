# A character-level GRU language model, trained over five chunks of one text
import torch
import torch.nn as nn

torch.manual_seed(0)
text = "hello autograd, hello graph"
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text])


class CharGRU(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.gru = nn.GRU(8, hidden, num_layers=2)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        y, h = self.gru(self.embed(x).unsqueeze(1), h)
        return self.out(y.squeeze(1)), h


model = CharGRU(len(chars), 16)
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
h = None
for i in range(0, 25, 5):
    x, y = data[i : i + 5], data[i + 1 : i + 6]
    logits, h = model(x, h)
    h = h.detach()
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
