# source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.retain_grad
# edits: the second listing (with retain_grad)
# gathered: 2026-12-07
import torch
# Create a leaf tensor
x = torch.randn(1, 10, requires_grad=True)
# Intermediate non-leaf tensor
y = x * 2
# Call retain_grad() on the non-leaf tensor you want to inspect
y.retain_grad()
z = y.relu()
output = z.sum()
# Perform the backward pass
output.backward()
# Now you can access the gradients of y
print(f"Gradients of x (leaf): {x.grad}")
print(f"Gradients of y (non-leaf): {y.grad}") # This will now have a value
