# LSTM language model: "Trying to backward through the graph a second time" on the second batch
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, emb, hid = 20, 8, 16


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hid, num_layers=2, batch_first=True)
        self.out = nn.Linear(hid, vocab)

    def forward(self, x, hidden):
        y, hidden = self.lstm(self.embed(x), hidden)
        return self.out(y), hidden


model = LM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
data = torch.randint(0, vocab, (4, 31))

hidden = (torch.zeros(2, 4, hid), torch.zeros(2, 4, hid))
for i in range(0, 30, 10):
    inputs, targets = data[:, i : i + 10], data[:, i + 1 : i + 11]
    optimizer.zero_grad()
    logits, hidden = model(inputs, hidden)
    loss = criterion(logits.reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    optimizer.step()
    print(f"batch {i // 10}: loss {loss.item():.3f}")
