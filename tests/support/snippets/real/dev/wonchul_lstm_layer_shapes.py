# source: https://github.com/wonchul-kim/Machine_Learning
# edits: the notebook's code cells as one script
import torch
import torch.nn as nn

input_dim = 5
hidden_dim = 10
num_layers = 1

lstm_layer = nn.LSTM(input_dim, hidden_dim, 
                     num_layers, batch_first=True)

batch_size = 1
seq_len = 1

inp = torch.randn(batch_size, seq_len, input_dim)
hidden_state = torch.randn(num_layers, batch_size, hidden_dim)
cell_state = torch.randn(num_layers, batch_size, hidden_dim)
hidden = (hidden_state, cell_state)

print("Input shape: ", inp.shape)
print("Hidden state shape: ", hidden_state.shape)
print("cell state shape: ", cell_state.shape)

out, hidden = lstm_layer(inp, hidden)
print("Output shape: ", out.shape)
print("Hidden: ", hidden)
