# source: https://forums.fast.ai/t/why-does-the-nll-has-grad-fn-while-accuracy-doesnt/50891
# kind: no-grad-fn
# edits: the thread's accuracy used as the training loss on a tiny model
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x_train, y_train = torch.randn(6, 5), torch.randint(0, 3, (6,))
pred = model(x_train)
acc = (torch.argmax(pred, dim=-1) == y_train).float().mean()
loss = 1 - acc
loss.backward()
opt.step()
