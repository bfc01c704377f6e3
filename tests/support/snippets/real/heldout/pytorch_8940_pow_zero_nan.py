# source: https://github.com/pytorch/pytorch/issues/8940
# edits: import torch added
import torch

x = torch.tensor([0., 1.], requires_grad=True)
loss = sum((x)**0)
loss.backward()
print(loss)
print(x.grad)
