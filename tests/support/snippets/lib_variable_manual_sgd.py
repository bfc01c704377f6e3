# Old-style manual gradient descent with Variable, as in the 0.3 tutorials
import torch
from torch.autograd import Variable

x = Variable(torch.randn(8, 4), requires_grad=False)
y = Variable(torch.randn(8, 2), requires_grad=False)
w1 = Variable(torch.randn(4, 5), requires_grad=True)
w2 = Variable(torch.randn(5, 2), requires_grad=True)

learning_rate = 1e-2
for t in range(5):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    print(t, loss.item())
    loss.backward()
    w1.data.sub_(learning_rate * w1.grad.data)
    w2.data.sub_(learning_rate * w2.grad.data)
    w1.grad.data.zero_()
    w2.grad.data.zero_()
