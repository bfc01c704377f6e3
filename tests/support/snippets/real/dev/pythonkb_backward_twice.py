# source: https://pythonkb.com/python-pytorch-runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed
# edits: none (the page's first example)
import torch
# Define a simple computation graph
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.sum(x ** 2)
# Perform the first backward pass
y.backward()
# Perform the second backward pass
y.backward()
