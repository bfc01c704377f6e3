# source: https://github.com/tenstorrent/tt-blacksmith/pull/711
# kind: missing-zero-grad
# edits: the Trainer's step as a method on a tiny model, before the fix (no zero_grad)
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def train_step(self, x, y):
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, steps):
        for _ in range(steps):
            self.train_step(torch.randn(8, 4), torch.randn(8, 1))


Trainer().fit(3)
