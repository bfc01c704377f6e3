# source: https://github.com/Runist/torch_maml/issues/3
# edits: a tiny model, args, a support batch and the functional forward around the posted (corrected) line; the query loss and outer backward added
import collections
import torch
import torch.nn as nn
import torch.nn.functional as F

class args:
    inner_lr = 0.04

model = nn.Linear(4, 3)
support_x, support_y = torch.randn(6, 4), torch.randint(0, 3, (6,))
query_x, query_y = torch.randn(6, 4), torch.randint(0, 3, (6,))

fast_weights = collections.OrderedDict(model.named_parameters())
for step in range(2):
    logits = F.linear(support_x, fast_weights['weight'], fast_weights['bias'])
    loss = F.cross_entropy(logits, support_y)
    grads = torch.autograd.grad(loss, fast_weights.values(), create_graph=True)
    fast_weights = collections.OrderedDict((name, param - args.inner_lr * grad)
                                           for ((name, param), grad) in zip(fast_weights.items(), grads))

query_loss = F.cross_entropy(F.linear(query_x, fast_weights['weight'], fast_weights['bias']), query_y)
query_loss.backward()
print(model.weight.grad)
