# source: https://github.com/chickenbestlover/RNN-Time-series-Anomaly-Detection/issues/42
# edits: the posted repackage_hidden method (Korean comment kept) inside a small LSTM predictor with init_hidden, and a training loop of three batches that calls it as the repository's train() does
import torch
import torch.nn as nn

class RNNPredictor(nn.Module):
    def __init__(self):
        super(RNNPredictor, self).__init__()
        self.rnn = nn.LSTM(2, 4)
        self.decoder = nn.Linear(4, 2)

    def forward(self, input, hidden):
        output, hidden = self.rnn(input, hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, 4), torch.zeros(1, bsz, 4))

    def repackage_hidden(self,h):
        """Wraps hidden states in new Variables, to detach them from their history."""
        if type(h) == tuple:
            return tuple(self.repackage_hidden(v) for v in h) # 이중 tuple을 푸는 역할
        else:
            return h.detach()

model = RNNPredictor()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
hidden = model.init_hidden(3)
for batch in range(3):
    inputSeq, targetSeq = torch.randn(5, 3, 2), torch.randn(5, 3, 2)
    hidden = model.repackage_hidden(hidden)
    hidden_ = model.repackage_hidden(hidden)
    optimizer.zero_grad()
    outSeq, hidden = model(inputSeq, hidden)
    loss = criterion(outSeq, targetSeq)
    loss.backward()
    optimizer.step()
