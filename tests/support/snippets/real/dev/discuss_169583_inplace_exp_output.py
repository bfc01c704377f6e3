# source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
# edits: the interactive session as a script; the expected error kept as the last line
# gathered: 2026-12-07
import torch
print (torch.__version__)
t = torch.arange (3.0, requires_grad = True)
u = 2 * t                             # (so it won't be a leaf variable)
uexp = u.exp()                        # uexp is the gradient of u.exp()
loss = uexp.sum()                     # (some dummy loss)
u[0] = 666                            # inplace modification of u
loss.backward (retain_graph = True)   # okay
uexp[0] = 666                         # inplace modification of uexp
loss.backward()
