# source: https://github.com/cybertronai/autograd-hacks/issues/6
# edits: a tiny model (also named actor, as the post's last line calls it), data, targets, loss_fn, flat_grad and the vector p defined before the posted lines
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
actor = model
data = torch.randn(5, 3)
targets = torch.randn(5, 2)
loss_fn = nn.MSELoss()

def flat_grad(grads):
    return torch.cat([g.reshape(-1) for g in grads])

p = torch.randn(sum(w.numel() for w in model.parameters()))

output = model(data)
loss = loss_fn(output, targets)
grad = torch.autograd.grad(loss, model.parameters(), create_graph=True)
grad = flat_grad(grad)
grad_p = (grad * p).sum()
hessian_p= torch.autograd.grad(grad_p , actor.parameters())
print([h.shape for h in hessian_p])
