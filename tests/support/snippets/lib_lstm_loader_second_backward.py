# Hidden state carried across DataLoader batches without detach: the second backward fails
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader

torch.manual_seed(0)
seqs = torch.randn(6, 4, 3)
targets = torch.randn(6, 4, 2)
loader = DataLoader(TensorDataset(seqs, targets), batch_size=2)
lstm = nn.LSTM(3, 2, batch_first=True)
optimizer = torch.optim.SGD(lstm.parameters(), lr=0.1)
criterion = nn.MSELoss()
h = torch.zeros(1, 2, 2)
c = torch.zeros(1, 2, 2)
for x, y in loader:
    out, (h, c) = lstm(x, (h, c))
    loss = criterion(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
