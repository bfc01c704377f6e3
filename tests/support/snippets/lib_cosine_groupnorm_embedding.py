# Siamese embeddings: GroupNorm, Identity, CosineSimilarity and a CosineEmbeddingLoss
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.GroupNorm(2, 8), nn.SiLU(), nn.Identity(), nn.Linear(8, 4))
a = torch.randn(5, 6)
b = torch.randn(5, 6)
same = torch.tensor([1, -1, 1, -1, 1])
ea, eb = encoder(a), encoder(b)
cos = nn.CosineSimilarity(dim=1, eps=1e-6)
print(cos(ea, eb))
criterion = nn.CosineEmbeddingLoss(margin=0.2)
loss = criterion(ea, eb, same)
loss.backward()
for name, p in encoder.named_parameters():
    print(name, p.grad.abs().sum().item())
