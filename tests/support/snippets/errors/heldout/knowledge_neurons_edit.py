# source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
# kind: view-inplace
# edits: the knowledge edit on a tiny dense layer's weight column, then a forward and backward
import torch
import torch.nn as nn

torch.manual_seed(0)
dense = nn.Linear(3, 5)
ori_pred_emb, tgt_emb = torch.randn(5), torch.randn(5)
pos = 1
dense.weight[:, pos] -= ori_pred_emb * 0.5
dense.weight[:, pos] += tgt_emb * 0.5
loss = dense(torch.randn(2, 3)).sum()
loss.backward()
