# source: https://www.codegenes.net/blog/optimize-part-of-parameters-in-pytorch
# edits: indentation the page lost restored (its first listing)
# gathered: 2026-12-07b
import torch
import torch.nn as nn
import torch.optim as optim
# Define a simple model
class SimpleModel(nn.Module):
    def __init__(self):
        super(SimpleModel, self).__init__()
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 1)
    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x)
        return x
model = SimpleModel()
# Freeze the first fully connected layer
for param in model.fc1.parameters():
    param.requires_grad = False
# Create an optimizer with only the unfrozen parameters
optimizer = optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
# Generate some dummy data
input_data = torch.randn(5, 10)
target = torch.randn(5, 1)
# Forward pass
output = model(input_data)
loss = nn.MSELoss()(output, target)
# Backward pass
optimizer.zero_grad()
loss.backward()
optimizer.step()
