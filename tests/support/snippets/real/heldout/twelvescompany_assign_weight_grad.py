# source: https://twelvescompany.co.uk/post/error-message-like-runtime-error-one-of-the-variables
# edits: the minus signs the page lost restored (output - 1)
# gathered: 2026-12-07
import torch
# Define a simple linear layer
model = torch.nn.Linear(10, 1)
# Example input data
input_tensor = torch.randn(1, 10, requires_grad=True)
# Forward pass
output = model(input_tensor)
# Loss calculation (using mean squared error for demonstration)
loss = torch.mean((output - 1)**2)
# Backpropagation
loss.backward()
# Update weights using gradient descent
with torch.no_grad():
    model.weight = 0.1 * model.weight.grad
# **Error occurs here when attempting another iteration**
output = model(input_tensor)
loss = torch.mean((output - 1)**2)
loss.backward()
