# source: https://github.com/modelscope/ms-swift/issues/4613
# kind: leaf-inplace
# edits: the embedding output as a leaf (as it was on that device), then the += from the template
import torch

torch.manual_seed(0)
inputs_embeds = torch.randn(5, 4, requires_grad=True)
image_embeds = torch.randn(2, 4)
inputs_embeds += image_embeds.mean() * 0.0
loss = inputs_embeds.sum()
loss.backward()
