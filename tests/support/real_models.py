"""Real ``torch.nn`` training scripts, each with the call that fails in it (None when none
does), and the engine order of one recorded call: shared by the CPU and CUDA tests."""

from __future__ import annotations

from app.core.model.recording import Recording

MLP = """\
# An MLP regression step
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(2):
    out = model(x)
    loss = loss_fn(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"{loss.item():.6f}")
"""

LSTM_LM = """\
# One step of an LSTM language model
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

    def forward(self, tokens, state=None):
        hidden, state = self.lstm(self.embed(tokens), state)
        return self.decoder(hidden), state


model = LanguageModel(vocab=20, dim=16)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 20, (2, 9))
logits, state = model(tokens[:, :-1])
loss = F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
opt.zero_grad()
loss.backward()
opt.step()
"""

TRANSFORMER = """\
# A TransformerEncoderLayer training step
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
head = nn.Linear(64, 1)
opt = torch.optim.AdamW([*layer.parameters(), *head.parameters()], lr=1e-3)
x, y = torch.randn(2, 10, 64), torch.randn(2, 10, 1)
for step in range(2):
    loss = (head(layer(x)) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

CNN = """\
# A small CNN with BatchNorm
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, images):
        h = F.max_pool2d(torch.relu(self.bn(self.conv(images))), 2)
        return self.fc(h.flatten(1))


net = SmallCNN()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(6, 1, 8, 8), torch.tensor([0, 1, 2, 0, 1, 2])
for step in range(2):
    loss = F.cross_entropy(net(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

GAN = """\
# A GAN whose discriminator step does not detach the fake batch
import torch
from torch import nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, z):
        return self.body(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.nn.functional.leaky_relu(self.hidden(x), 0.2)
        return torch.sigmoid(self.out(h))


G, D = Generator(), Discriminator()
bce = nn.BCELoss()
g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
real = torch.randn(4, 3)
fake = G(torch.randn(4, 2))
d_loss = bce(D(real), torch.ones(4, 1)) + bce(D(fake), torch.zeros(4, 1))
d_opt.zero_grad()
d_loss.backward()
d_opt.step()
g_loss = bce(D(fake), torch.ones(4, 1))
g_opt.zero_grad()
g_loss.backward()
g_opt.step()
"""

BPTT = """\
# Truncated BPTT that carries the hidden state without detach
import torch
from torch import nn

torch.manual_seed(0)


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(5, 8)
        self.head = nn.Linear(8, 5)

    def forward(self, x, h):
        h = self.cell(x, h)
        return self.head(h), h


rnn = CharRNN()
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
data = torch.randn(3, 4, 2, 5)
h = torch.zeros(2, 8)
for chunk in range(3):
    loss = 0.0
    for t in range(4):
        logits, h = rnn(data[chunk, t], h)
        loss = loss + logits.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

STEP_BETWEEN = """\
# optimizer.step() between two backwards of one graph
import torch
from torch import nn

torch.manual_seed(0)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 6)
        self.policy = nn.Linear(6, 2)
        self.value = nn.Linear(6, 1)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.policy(h), self.value(h)


net = TwoHeads()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
policy, value = net(torch.randn(4, 3))
policy_loss = policy.log_softmax(-1).mean()
value_loss = (value - policy.max(-1, keepdim=True).values).pow(2).mean()
policy_loss.backward(retain_graph=True)
opt.step()
value_loss.backward()
"""

SCRIPTS = {
    "mlp": (MLP, None),
    "lstm-lm": (LSTM_LM, None),
    "transformer": (TRANSFORMER, None),
    "cnn-batchnorm": (CNN, None),
    "gan-without-detach": (GAN, 1),
    "bptt-without-detach": (BPTT, 1),
    "step-between-backwards": (STEP_BETWEEN, 1),
}


def entered(rec: Recording, call: int) -> list[str]:
    """The nodes the engine entered in one call, in order, the failing one last."""
    info = rec.calls[call]
    steps = [rec.timeline[i] for i in range(info.first_step, info.last_step + 1)]
    names = [rec.graph.node(s.node).name for s in steps if s.kind == "node" and s.node is not None]
    if info.failed_node is not None:
        names.append(rec.graph.node(info.failed_node).name)
    return names
