# source: https://www.codegenes.net/blog/detach_hidden-pytorch
# edits: the class's forward and a training loop completed as the page describes; small sizes
# gathered: 2026-12-07
import torch
import torch.nn as nn

# Define an LSTM model
class SimpleLSTM(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super(SimpleLSTM, self).__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers)

    def forward(self, x, hidden):
        out, hidden = self.lstm(x, hidden)
        return out, hidden

def detach_hidden(hidden):
    return tuple(h.detach() for h in hidden)

model = SimpleLSTM(3, 4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
for step in range(3):
    x = torch.randn(5, 2, 3)
    hidden = detach_hidden(hidden)
    out, hidden = model(x, hidden)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
