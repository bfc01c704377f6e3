# source: https://github.com/cavalleria/cavaface/issues/64
# kind: version-counter
# edits: the margin head's cosine clamped, its angle taken, then the margin subtracted in place
#   on the clamped cosine; tiny sizes
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
weight = nn.Parameter(torch.randn(5, 4))
optimizer = torch.optim.SGD([weight], lr=0.1)
emb, label = torch.randn(3, 4), torch.tensor([0, 2, 4])

optimizer.zero_grad()
cos_theta = F.linear(F.normalize(emb), F.normalize(weight)).clamp(-1, 1)
theta = torch.acos(cos_theta)
cos_theta[torch.arange(3), label] -= 0.35
lossx = F.cross_entropy(cos_theta * 64, label) + theta.mean()
lossx.backward()
optimizer.step()
