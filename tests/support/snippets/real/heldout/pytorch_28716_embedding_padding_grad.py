# source: https://github.com/pytorch/pytorch/issues/28716
# edits: .cuda() calls removed (CPU only); imports added
import torch
import torch.nn as nn

emb = nn.Embedding(num_embeddings=10, embedding_dim=8, padding_idx=0, sparse=False)
x = torch.zeros(769, dtype=torch.int64).unsqueeze(0)
x = emb(x)
x = x.sum()
x.backward()
print(emb.weight.grad[0])
