# source: https://github.com/pytorch/pytorch/issues/2298
# edits: imports added and main() called at the end
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

def main():
    print('BCELoss():')
    criterion = nn.BCELoss()
    w = Variable(torch.Tensor([0.0]), requires_grad=True)
    x = Variable(torch.Tensor([1]), requires_grad=True)
    s = w * x
    loss = criterion(F.sigmoid(s), Variable(torch.Tensor([0.0])))
    print('loss: ', loss)
    loss.backward()
    print('w.grad: ', w.grad)
    print('==============')
    print('BCEWithLogitsLoss():')
    criterion = nn.BCEWithLogitsLoss()
    w = Variable(torch.Tensor([0.0]), requires_grad=True)
    x = Variable(torch.Tensor([1]), requires_grad=True)
    s = w * x
    loss = criterion(s, Variable(torch.Tensor([0.0])))
    print('loss: ', loss)
    loss.backward()
    print('w.grad: ', w.grad)
    print('==============')

main()
