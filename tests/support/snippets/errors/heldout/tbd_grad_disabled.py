# source: https://github.com/davidmascharka/tbd-nets/issues/8
# kind: no-grad-fn
# edits: the notebook's cells in order: grad mode switched off for the visualisation cells,
#   then train_epoch; tiny module network
import torch
import torch.nn as nn

torch.set_grad_enabled(False)
torch.manual_seed(0)
tbd_net = nn.Linear(4, 3)
optimizer = torch.optim.Adam(tbd_net.parameters(), 1e-4)
xent_loss = nn.CrossEntropyLoss()


def train_epoch():
    for i in range(2):
        feats, answers = torch.randn(2, 4), torch.tensor([0, 2])
        optimizer.zero_grad()
        outs = tbd_net(feats)
        loss = xent_loss(outs, answers)
        loss.backward()
        optimizer.step()


train_epoch()
