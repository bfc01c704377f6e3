# Train/validation split with random_split, CrossEntropyLoss and Adam
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader, random_split

torch.manual_seed(0)
features = torch.randn(100, 4)
labels = (features[:, 0] + features[:, 1] > 0).long()
full = TensorDataset(features, labels)
train_set, val_set = random_split(full, [80, 20])
train_loader = DataLoader(train_set, batch_size=20, shuffle=True)
val_loader = DataLoader(val_set, batch_size=20)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in val_loader:
            pred = F.softmax(model(xb), dim=1).argmax(dim=1)
            correct += (pred == yb).sum().item()
    print("epoch", epoch, "train loss", round(loss.item(), 4), "val acc", correct / len(val_set))
