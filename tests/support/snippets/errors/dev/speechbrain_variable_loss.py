# source: https://github.com/speechbrain/speechbrain/issues/735
# kind: silent-no-grad-fn
# edits: the brain's compute_forward / compute_objectives as two functions on a tiny model; the
#   features detached before the model (the cut), the poster's Variable(loss, requires_grad=True)
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
model = nn.Linear(5, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def compute_forward(wavs):
    feats = wavs * 2.0
    predict = model(feats).detach()
    return {"predict": predict}


def compute_objectives(predictions, labels):
    loss = nn.functional.cross_entropy(predictions["predict"], labels)
    loss = Variable(loss, requires_grad=True)
    return loss


for step in range(2):
    loss = compute_objectives(compute_forward(torch.randn(4, 5)), torch.tensor([0, 1, 2, 0]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
