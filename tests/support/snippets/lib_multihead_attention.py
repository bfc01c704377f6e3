# Self-attention with nn.MultiheadAttention: output, weights and a backward through both
import torch
import torch.nn as nn

torch.manual_seed(0)
embed_dim, num_heads = 8, 2
mha = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
norm = nn.LayerNorm(embed_dim)
x = torch.randn(2, 5, embed_dim, requires_grad=True)
mask = torch.triu(torch.ones(5, 5), diagonal=1).bool()

attn_output, attn_weights = mha(x, x, x, attn_mask=mask)
out = norm(x + attn_output)
loss = out.pow(2).mean() + attn_weights.sum() * 0.01
loss.backward()
print(attn_output.shape, attn_weights.shape)
print(x.grad.abs().sum())
