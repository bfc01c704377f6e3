# A single self-attention head written by hand, with a causal mask and a config object
import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    def __init__(self, n_embd=8, block_size=4, dropout=0.0):
        self.n_embd = n_embd
        self.block_size = block_size
        self.dropout = dropout


class Head(nn.Module):
    def __init__(self, config, head_size):
        super().__init__()
        self.key = nn.Linear(config.n_embd, head_size, bias=False)
        self.query = nn.Linear(config.n_embd, head_size, bias=False)
        self.value = nn.Linear(config.n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(config.block_size, config.block_size)))

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ self.value(x)


torch.manual_seed(1337)
cfg = Config()
head = Head(cfg, head_size=4)
x = torch.randn(2, 4, 8)
out = head(x)
loss = out.pow(2).mean()
loss.backward()
print(tuple(out.shape), round(loss.item(), 5), head.key.weight.grad.abs().sum() > 0)
