# source: https://github.com/Animadversio/GAN-Geometry/issues/4
# kind: non-scalar
# edits: the forward HVP operator's gradient of the objective's activations w.r.t. the
#   perturbation, tiny generator and objective
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 6)
objective = nn.Linear(6, 3)
perturb_vecs = torch.zeros(2, 4, requires_grad=True)
img = model(perturb_vecs)
activs = objective(img)
ftgrad_both = torch.autograd.grad(activs, perturb_vecs, retain_graph=False, create_graph=False)[0]
print(ftgrad_both.shape)
