# source: https://tjhub.jdoodle.com/post/runtimeerror-grad-can-be-implicitly-created-only-for-scalar
# edits: none (the article's failing listing)
# gathered: 2026-12-07b
import torch
x = torch.randn(3, requires_grad=True)
y = torch.randn(3, requires_grad=True)
# Incorrect: multiple outputs
loss = torch.cat([x, y])
loss.backward() # This will throw the error!
