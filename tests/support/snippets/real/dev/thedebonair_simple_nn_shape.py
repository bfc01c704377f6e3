# source: https://thedebonair.co.uk/post/wrong-shape-at-fully-connected-layer-mat1-and-mat2-shapes
# edits: none
import torch
import torch.nn as nn

# Define a simple neural network
class SimpleNN(nn.Module):
    def __init__(self):
        super(SimpleNN, self).__init__()
        self.fc1 = nn.Linear(10, 5)  # Fully connected layer with input size 10 and output size 5

    def forward(self, x):
        return self.fc1(x)

# Example input with incorrect shape
input_tensor = torch.randn(8, 8)  # Incorrect shape: (batch_size, input_features)
model = SimpleNN()
output = model(input_tensor)  # This line will throw an error
