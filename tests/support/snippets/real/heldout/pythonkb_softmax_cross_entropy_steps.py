# source: https://pythonkb.com/python-should-i-use-softmax-as-output-when-using-cross-entropy-loss-in-pytorch
# edits: the article's eight steps, one after the other
# gathered: 2026-12-07b
import torch
import torch.nn as nn
import torch.optim as optim

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 3)
    
    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x)
        return x

model = Net()

criterion = nn.CrossEntropyLoss()

optimizer = optim.SGD(model.parameters(), lr=0.01)

inputs = torch.randn(8, 10)
targets = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])  # ground truth labels

outputs = model(inputs)
loss = criterion(outputs, targets)

optimizer.zero_grad()
loss.backward()
optimizer.step()
