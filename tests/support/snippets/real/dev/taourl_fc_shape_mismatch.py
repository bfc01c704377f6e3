# source: https://taourl.com/read-2492748.html
# edits: none (the page's first block)
import torch

import torch.nn as nn

# Incorrect implementation causing shape mismatch

input_tensor = torch.randn(32, 64) # Batch size 32, feature size 64

fc_layer = nn.Linear(128, 10) # Expects input with 128 features, outputs 10

output = fc_layer(input_tensor) # Error: mat1 (32x64) and mat2 (128x10) cannot be multiplied
