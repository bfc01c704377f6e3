# source: https://theneuralbase.pages.dev/pytorch/learn/intermediate/gradient-exploding-gradient-clipping/
# edits: indentation the page lost restored; the page's first model and loop (the excerpt ends inside the second)
import torch
import torch.nn as nn
import torch.optim as optim
torch.manual_seed(42)
model = nn.Sequential(
    nn.Linear(10, 50),
    nn.ReLU(),
    nn.Linear(50, 50),
    nn.ReLU(),
    nn.Linear(50, 1)
)
optimizer = optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.MSELoss()
X = torch.randn(32, 10)
y = torch.randn(32, 1)
print("Training WITHOUT gradient clipping:")
for epoch in range(3):
    optimizer.zero_grad()
    output = model(X)
    loss = loss_fn(output, y)
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float('inf'))
    print(f" Epoch {epoch + 1}: loss = {loss.item():.6f}, gradient norm = {total_norm:.4f}")
    optimizer.step()
