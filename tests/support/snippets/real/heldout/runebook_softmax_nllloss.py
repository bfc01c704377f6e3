# source: https://runebook.dev/en/articles/pytorch/generated/torch.nn.softmax
# edits: none (the article's first listing)
# gathered: 2026-12-07b
import torch
import torch.nn as nn

# Let's say you have some raw model outputs (logits)
logits = torch.randn(1, 5)

#  Incorrect way
# Softmax + NLLLoss
softmax_layer = nn.Softmax(dim=1)
probs = softmax_layer(logits)
loss_func = nn.NLLLoss()
target = torch.tensor([2])  # Assuming the correct class is index 2
# This will raise an error or produce incorrect results!
# loss = loss_func(probs, target)

#  Correct way
# LogSoftmax + NLLLoss
log_softmax_layer = nn.LogSoftmax(dim=1)
log_probs = log_softmax_layer(logits)
loss_func_nll = nn.NLLLoss()
loss = loss_func_nll(log_probs, target)
print(f"Correct loss: {loss.item()}")
