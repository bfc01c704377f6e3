# source: https://www.codegenes.net/blog/detach-lstm-pytorch
# edits: the page's LSTM with smaller sizes; a loop over chunks that detaches (h, c) as the page describes
# gathered: 2026-12-07
import torch
import torch.nn as nn
# Define an LSTM layer
input_size = 4
hidden_size = 5
num_layers = 1
lstm = nn.LSTM(input_size, hidden_size, num_layers)
# Generate some input data
batch_size = 3
seq_len = 5
input_data = torch.randn(seq_len, batch_size, input_size)
h = torch.zeros(num_layers, batch_size, hidden_size)
c = torch.zeros(num_layers, batch_size, hidden_size)
optimizer = torch.optim.SGD(lstm.parameters(), lr=0.1)
for chunk in range(3):
    output, (h, c) = lstm(input_data, (h, c))
    loss = output.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    h = h.detach()
    c = c.detach()
