# An LSTM language model trained over batches, its hidden state carried and detached
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, tokens, hidden):
        out, hidden = self.lstm(self.embed(tokens), hidden)
        return self.decoder(out), hidden


vocab = 20
model = LanguageModel(vocab, 8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
text = torch.randint(0, vocab, (2, 25))
hidden = None
for start in range(0, 20, 5):
    inputs, targets = text[:, start : start + 5], text[:, start + 1 : start + 6]
    if hidden is not None:
        hidden = tuple(h.detach() for h in hidden)
    logits, hidden = model(inputs, hidden)
    loss = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
