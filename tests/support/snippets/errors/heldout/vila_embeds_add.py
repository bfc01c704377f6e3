# source: https://github.com/NVlabs/VILA/pull/199
# kind: leaf-inplace
# edits: the text embeddings as a leaf that requires grad (as the error says), the image term
#   added with +=; tiny sizes
import torch

torch.manual_seed(0)
text_embeds = torch.randn(2, 4, requires_grad=True)
image_embeds = torch.randn(3, 4)
text_embeds += image_embeds.mean(0) * 0.0
loss = text_embeds.pow(2).sum()
loss.backward()
