# A character-level style RNN trained on random sequences, hidden state carried and detached
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, num_layers=1):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.rnn = nn.RNN(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x, hidden):
        out, hidden = self.rnn(x, hidden)
        out = self.fc(out.reshape(-1, self.hidden_size))
        return out, hidden

    def init_hidden(self, batch_size):
        return torch.zeros(self.num_layers, batch_size, self.hidden_size)


torch.manual_seed(0)
model = RNNModel(input_size=5, hidden_size=8, output_size=5)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
hidden = model.init_hidden(2)
losses = []
for step in range(4):
    inputs = torch.randn(2, 3, 5)
    targets = torch.randint(0, 5, (6,))
    hidden = hidden.detach()
    optimizer.zero_grad()
    output, hidden = model(inputs, hidden)
    loss = criterion(output, targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("losses:", ["%.3f" % l for l in losses])
