# source: https://preproom.ai/learn/model-training-pytorch.html
# edits: x and y (ten random points on a line) added; 200 epochs cut to 5
# gathered: 2026-12-07b
import torch
import torch.nn as nn
x = torch.randn(10, 1)
y = 2 * x + 1
model = nn.Linear(1, 1) # one weight w and bias b
criterion = nn.MSELoss() # mean squared error
optimizer = torch.optim.SGD(model.parameters(), lr=0.03)
model.train() # train mode (dropout, batchnorm)
for epoch in range(5):
    optimizer.zero_grad() # clear grads — they ACCUMULATE
    pred = model(x) # forward pass: prediction
    loss = criterion(pred, y) # forward pass: how wrong
    loss.backward() # backward pass: autograd fills .grad
    optimizer.step() # update: w -= lr * w.grad, etc.
