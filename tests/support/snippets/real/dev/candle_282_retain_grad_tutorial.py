# source: https://github.com/candle-org/candle/issues/282
# edits: none (the minimal reproduction, plain PyTorch)
import torch
inp = torch.eye(5, requires_grad=True)
out = (inp + 1).pow(2)
out.retain_grad()
loss = out.sum()
loss.backward()
print(out.grad)  # expected: tensor of ones, got None
