# source: https://developpaper.com/an-example-of-gradient-calculation-for-variables-of-non-leaf-nodes-in-python/
# edits: the imports the page left out added
# gathered: 2026-12-07
import torch
from torch.autograd import Variable
def hook_y(grad):
    print(grad)
x = Variable(torch.ones(2, 2), requires_grad=True)
y = x + 2
z = y * y * 3
y.register_hook(hook_y)
out = z.mean()
out.backward()
