# source: https://github.com/Atcold/NYU-DLSP20/issues/765
# kind: view-inplace
# edits: the positional encoding built into an nn.Parameter (the embedding's weight) with slice
#   assignments; torch.sin in place of np.sin; tiny sizes
import torch
import torch.nn as nn

max_len, d_model = 6, 4
pos = torch.arange(max_len).float().unsqueeze(1)
theta = pos / (10000 ** (torch.arange(d_model).float() / d_model))
E = nn.Embedding(max_len, d_model).weight
E[:, 0::2] = torch.sin(theta[:, 0::2])
E[:, 1::2] = torch.cos(theta[:, 1::2])
loss = E.sum()
loss.backward()
