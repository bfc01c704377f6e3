# source: https://androidkt.com/print-computed-gradient-values-of-pytorch-model/
# edits: the page's code blocks joined; the backward and the printed grads that the page goes on to show added
import torch
x = torch.tensor(3.)
w = torch.tensor(4., requires_grad=True)
b = torch.tensor(5., requires_grad=True)

y = w * x + b

print(y) #tensor(17., grad_fn=<AddBackward0>)

y.backward()
print(w.grad)
print(b.grad)
