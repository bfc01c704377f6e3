# source: https://github.com/WOW5678/CompNet/issues/2
# kind: version-counter
# edits: the memory read (bmm) and write (in place into the memory) of the model on a [1, 2, 2]
#   memory, as the error names
import torch

torch.manual_seed(0)
w = torch.randn(1, 2, 2, requires_grad=True)
memory = torch.zeros(1, 2, 2) + w
read = torch.bmm(w, memory)
memory[:, 0] = read[:, 0]
loss = (read.sum() + memory.sum())
loss.backward()
