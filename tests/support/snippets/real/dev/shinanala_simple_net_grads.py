# source: https://shinanala.com/post/torch-nn-utils-clip-grad-norm
# edits: indentation the page lost restored
import torch
import torch.nn as nn
# Define a simple neural network
class SimpleNet(nn.Module):
    def __init__(self):
        super(SimpleNet, self).__init__()
        self.fc1 = nn.Linear(10, 100)
        self.fc2 = nn.Linear(100, 10)
    def forward(self, x):
        x = self.fc1(x)
        x = self.fc2(x)
        return x
# Create an instance of the network and some sample data
model = SimpleNet()
input_data = torch.randn(1, 10)
# Perform a forward pass and calculate gradients
output = model(input_data)
loss = torch.sum(output)
loss.backward()
# Print the gradients of the first layer
print(model.fc1.weight.grad)
