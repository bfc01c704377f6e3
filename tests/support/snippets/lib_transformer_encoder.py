# Sequence classifier: TransformerEncoder over an embedding, GELU head, one Adam step
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, d_model = 20, 16
embedding = nn.Embedding(vocab, d_model)
encoder_layer = nn.TransformerEncoderLayer(
    d_model=d_model, nhead=4, dim_feedforward=32, dropout=0.1, batch_first=True
)
encoder = nn.TransformerEncoder(encoder_layer, num_layers=2)
head = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, 3))
params = list(embedding.parameters()) + list(encoder.parameters()) + list(head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

tokens = torch.randint(0, vocab, (4, 7))
labels = torch.tensor([0, 2, 1, 1])
hidden = encoder(embedding(tokens))
logits = head(hidden.mean(dim=1))
criterion = nn.CrossEntropyLoss()
loss = criterion(logits, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(logits.shape, round(loss.item(), 4))
