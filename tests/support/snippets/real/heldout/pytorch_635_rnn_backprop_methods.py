# source: https://github.com/pytorch/pytorch/issues/635
# edits: .cuda() calls dropped (CPU); the comparison loop after the failing call, cut off in the stored copy, left out
# gathered: 2026-12-07b
import torch
from torch import nn
from torch.autograd import Variable

torch.backends.cudnn.enabled=False

model  = nn.LSTM(5, 5, 1)
model2 = nn.LSTM(5, 5, 1)

for i in range(len(model2.all_weights)):
    for j in range(len(model2.all_weights[i])):
        model2.all_weights[i][j].data.copy_(model.all_weights[i][j].data)

crit = nn.MSELoss()
crit2 = nn.MSELoss()

input = Variable(torch.randn(2,1,5))
target = Variable(torch.ones(2,1,5), requires_grad=False)
hidden = [ Variable(torch.randn(1,1,5).fill_(0.0)),
            Variable(torch.randn(1,1,5).fill_(0.0))]

output, hidden = model(input, hidden)
loss = crit(output, target)
loss.backward(retain_variables=True)

hidden2 = [ Variable(torch.randn(1,1,5).fill_(0.0)),
            Variable(torch.randn(1,1,5).fill_(0.0))]

loss2 = 0
for i in range(input.size(0)):
    output2, hidden2 = model(input[i].view(1,1,-1), hidden2)
    loss2 += crit2(output2[0], target[i])

loss2 = loss2/2
loss2.backward(retain_variables=True)
