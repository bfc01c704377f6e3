# source: https://github.com/CoinCheung/pytorch-loss/issues/27
# edits: imports added; logits, targets and the backward call added after the posted class
import torch
import torch.nn as nn
import torch.nn.functional as F

class FocalLoss(nn.Module):
    def __init__(self, alpha=1, gamma=2, logits=False, reduce=True):
        super(FocalLoss, self).__init__()
        self.alpha = alpha
        self.gamma = gamma
        self.logits = logits
        self.reduce = reduce

    def forward(self, inputs, targets):
        if self.logits:
            BCE_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduce=False)
        else:
            BCE_loss = F.binary_cross_entropy(inputs, targets, reduce=False)
        pt = torch.exp(-BCE_loss)
        F_loss = self.alpha * (1-pt)**self.gamma * BCE_loss

        if self.reduce:
            return torch.mean(F_loss)
        else:
            return F_loss

logits = torch.randn(4, 3, requires_grad=True)
targets = torch.randint(0, 2, (4, 3)).float()
loss = FocalLoss(logits=True)(logits, targets)
loss.backward()
print(logits.grad)
