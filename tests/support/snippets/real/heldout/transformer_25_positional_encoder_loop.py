# source: https://github.com/SamLynnEvans/Transformer/issues/25
# edits: the posted loop inside the repository's PositionalEncoder (its sizes: d_model 512, max_seq_len 80), applied to a random batch; a backward added
import math
import torch
import torch.nn as nn

class PositionalEncoder(nn.Module):
    def __init__(self, d_model, max_seq_len = 80):
        super().__init__()
        self.d_model = d_model
        pe = torch.zeros(max_seq_len, d_model)
        for pos in range(max_seq_len):
            for i in range(0, d_model, 2):
                pe[pos, i] = math.sin(pos / (10000 ** ((2 * i) / d_model)))
                pe[pos, i + 1] = math.cos(pos / (10000 ** ((2 * (i + 1)) / d_model)))
        pe = pe.unsqueeze(0)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x * math.sqrt(self.d_model)
        seq_len = x.size(1)
        x = x + self.pe[:,:seq_len]
        return x

embed = nn.Embedding(10, 512)
pos = PositionalEncoder(512)
out = pos(embed(torch.tensor([[1, 2, 3]])))
out.mean().backward()
print(embed.weight.grad.abs().sum())
