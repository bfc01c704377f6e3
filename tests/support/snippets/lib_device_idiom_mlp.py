# The usual device line, an MLP moved to it, and a training loop over a DataLoader
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("Using device:", device)

torch.manual_seed(123)
X = torch.randn(40, 5)
y = torch.randint(0, 3, (40,))
train_loader = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, drop_last=True)

model = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Dropout(p=0.2), nn.Linear(32, 3)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

for epoch in range(2):
    model.train()
    total, correct = 0, 0
    for inputs, labels in train_loader:
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        total += labels.size(0)
        correct += (logits.argmax(1) == labels).sum().item()
    print(f"Epoch [{epoch + 1}/2], Loss: {loss.item():.4f}, Acc: {100 * correct / total:.2f}%")
