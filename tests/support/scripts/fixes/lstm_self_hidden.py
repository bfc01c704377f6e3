# Stateful LSTM keeps its hidden state on the module between batches
import torch
import torch.nn as nn

torch.manual_seed(0)


class StatefulLSTM(nn.Module):
    def __init__(self, n_in=3, n_hidden=6):
        super().__init__()
        self.lstm = nn.LSTM(n_in, n_hidden, batch_first=True)
        self.fc = nn.Linear(n_hidden, 1)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return self.fc(out[:, -1])


model = StatefulLSTM()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    x, y = torch.randn(2, 5, 3), torch.randn(2, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
