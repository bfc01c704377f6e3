# source: https://github.com/clcarwin/sphereface_pytorch/issues/24
# edits: output, target and gamma defined before the posted AngleLoss lines (self.gamma written as gamma); backward added
import torch
import torch.nn.functional as F
from torch.autograd import Variable

gamma = 0
output = Variable(torch.randn(4, 5), requires_grad=True)
target = Variable(torch.LongTensor([[1], [0], [4], [2]]))

logpt = F.log_softmax(output)
logpt = logpt.gather(1,target)
logpt = logpt.view(-1)
pt = Variable(logpt.data.exp())
loss = -1 * (1-pt)**gamma * logpt
loss = loss.mean()
loss.backward()
print(output.grad)
