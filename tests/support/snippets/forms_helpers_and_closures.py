# Helpers that build a model from a list of sizes, a closure for the loss, early stopping with while
import torch
import torch.nn as nn


def make_mlp(sizes, activation=nn.ReLU):
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


def make_loss(weight):
    def loss_fn(pred, target):
        return weight * ((pred - target) ** 2).mean()

    return loss_fn


torch.manual_seed(3)
model = make_mlp([2, 8, 8, 1])
loss_fn = make_loss(0.5)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(20, 2)
Y = (X[:, :1] * 2 - X[:, 1:]).detach()
history = {"loss": []}
step, best = 0, float("inf")
while step < 12:
    opt.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    opt.step()
    history["loss"].append(loss.item())
    if loss.item() < best - 1e-4:
        best = loss.item()
    else:
        break
    step += 1
print(f"stopped after {step} steps, best {best:.4f}, {len(history['loss'])} losses")
