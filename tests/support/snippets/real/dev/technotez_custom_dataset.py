# source: https://www.technotez.net/pytorch/pytorch-dataloader
# edits: a DataLoader, a linear model and one pass of training added after the page's dataset (the page describes them)
# gathered: 2026-12-07
import torch
from torch.utils.data import Dataset, DataLoader
class MyDataset(Dataset):
    def __init__(self, data, labels):
        self.data = data
        self.labels = labels
    def __len__(self):
        return len(self.data)
    def __getitem__(self, idx):
        x = self.data[idx]
        y = self.labels[idx]
        return x, y
# Example usage
data = torch.randn(100, 3) # 100 samples, 3 features
labels = torch.randint(0, 2, (100,)) # 100 labels (binary classification)
dataset = MyDataset(data, labels)
print(len(dataset)) # 100
print(dataset[0]) # (tensor of features, label)
loader = DataLoader(dataset, batch_size=32, shuffle=True)
model = torch.nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for batch_x, batch_y in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(batch_x), batch_y)
    loss.backward()
    optimizer.step()
