# source: https://github.com/1Konny/gradcam_plus_plus-pytorch/issues/7
# kind: non-scalar
# edits: gradcam's forward: the class score of a batch of two inputs, backward on it
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
inputs = torch.randn(2, 6)
logit = model(inputs)
class_idx = logit.max(1)[-1]
score = logit[:, class_idx].squeeze()
model.zero_grad()
score.backward(retain_graph=False)
