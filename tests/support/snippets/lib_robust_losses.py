# L1, SmoothL1 and Huber losses on the same predictions, their gradients side by side
import torch
import torch.nn as nn

pred = torch.tensor([0.5, 1.5, -2.0, 4.0], requires_grad=True)
target = torch.tensor([0.0, 1.0, 0.0, 0.0])
for loss_fn in [nn.L1Loss(), nn.SmoothL1Loss(beta=1.0), nn.HuberLoss(delta=2.0), nn.MSELoss()]:
    pred.grad = None
    loss = loss_fn(pred, target)
    loss.backward()
    print(loss_fn, loss.item(), pred.grad)
