# source: https://www.codegenes.net/blog/freeze-weights-pytorch
# edits: indentation the page lost restored; 10 epochs cut to 3; the page's later torchvision resnet18 listing (a download) left out
# gathered: 2026-12-07b
import torch
import torch.nn as nn
class SimpleNet(nn.Module):
    def __init__(self):
        super(SimpleNet, self).__init__()
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 1)
    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x)
        return x
model = SimpleNet()
# Freeze the weights of the first fully - connected layer
for param in model.fc1.parameters():
    param.requires_grad = False
criterion = nn.MSELoss()
# Only optimize the parameters that require gradients
optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
# Generate some random data for demonstration
inputs = torch.randn(32, 10)
labels = torch.randn(32, 1)
for epoch in range(3):
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    print(f'Epoch {epoch + 1}, Loss: {loss.item()}')
# Freeze the entire fc1 layer
for name, param in model.named_parameters():
    if 'fc1' in name:
        param.requires_grad = False
for name, param in model.named_parameters():
    if 'fc2' not in name:
        param.requires_grad = False
