# source: https://theneuralbase.com/pytorch/learn/beginner/forward-pass-loss-backward-step/
# edits: the loop's body completed as the article describes (it was cut off after zero_grad); 20 epochs instead of 100
# gathered: 2026-12-07
import torch
import torch.nn as nn
import torch.optim as optim
torch.manual_seed(42)
model = nn.Sequential(
    nn.Linear(2, 4),
    nn.ReLU(),
    nn.Linear(4, 1)
)
criterion = nn.MSELoss()
optimizer = optim.SGD(model.parameters(), lr=0.01)
X = torch.randn(8, 2)
y = torch.randn(8, 1)
print("Before training:")
print(f"Loss: {criterion(model(X), y).item():.4f}")
print(f"First weight grad: {model[0].weight.grad}")
for epoch in range(20):
    optimizer.zero_grad()
    output = model(X)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
print(f"Loss: {loss.item():.4f}")
print(f"First weight grad: {model[0].weight.grad}")
