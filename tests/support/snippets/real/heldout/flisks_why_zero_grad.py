# source: https://flisks.com/python-why-do-we-need-to-call-zero-grad-in-pytorch
# edits: "data, targets = ..." given three random samples and learning_rate defined; the page's two blocks in order, indentation restored
import torch
from torch.autograd import Variable
import torch.optim as optim
def linear_model(x, W, b):
    return torch.matmul(x, W) + b
data, targets = torch.randn(3, 4), torch.randn(3, 3)
learning_rate = 0.01
W = Variable(torch.randn(4, 3), requires_grad=True)
b = Variable(torch.randn(3), requires_grad=True)
optimizer = optim.Adam([W, b])
for sample, target in zip(data, targets):
    # clear out the gradients of all Variables
    # in this optimizer (i.e. W, b)
    optimizer.zero_grad()
    output = linear_model(sample, W, b)
    loss = (output - target) ** 2
    loss.backward()
    optimizer.step()

W = Variable(torch.randn(4, 3), requires_grad=True)
b = Variable(torch.randn(3), requires_grad=True)
for sample, target in zip(data, targets):
    # clear out the gradients of Variables
    # (i.e. W, b)
    W.grad.data.zero_()
    b.grad.data.zero_()
    output = linear_model(sample, W, b)
    loss = (output - target) ** 2
    loss.backward()
    W -= learning_rate * W.grad.data
    b -= learning_rate * b.grad.data
