# source: https://github.com/pytorch/pytorch/issues/160064
# edits: none
import torch
from torch import nn

x = torch.randn(1, 5, 3)
mask = torch.tensor([False, False, True]).view(-1, 1, 1).expand(-1, 5, 5)
att = nn.MultiheadAttention(3, 3, batch_first=True)
y1, _ = att(x, x, x, attn_mask=mask, average_attn_weights=False, need_weights=False)
y2, weights = att(x, x, x, attn_mask=mask, average_attn_weights=False, need_weights=True)

print("\nWithout weights:")
print("================")
print(y1)


print("\nWith weights:")
print("==============")
print(y2)
print("weights:")
print("---------")
print(weights)
