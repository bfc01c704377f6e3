# source: https://github.com/divelab/DIG/issues/164
# kind: leaf-inplace
# edits: the generation step's latent as a leaf that requires grad, with noise added in place
#   before decoding; tiny sizes
import torch
import torch.nn as nn

torch.manual_seed(0)
decoder = nn.Linear(4, 4)
z = torch.randn(2, 4, requires_grad=True)
z.mul_(0.7)
out = decoder(z)
out.sum().backward()
