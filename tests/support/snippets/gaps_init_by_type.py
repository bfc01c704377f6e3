# Initialising layers by their type, and checking what a value is before using it.
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


def init_all(model):
    for layer in model:
        init_weights(layer)


model = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2))
init_all(model)
x = torch.Tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
target = torch.LongTensor([1, 0])
out = model(x)
loss = nn.CrossEntropyLoss()(out, target)
loss.backward()
value = loss.item() if isinstance(loss, torch.Tensor) else loss
print(isinstance(model, nn.Module), isinstance(model[1], (nn.Linear, nn.Conv2d)), round(value, 4))
print(torch.FloatTensor([1, 2]).dtype, target.dtype)
