# source: https://github.com/DrShushen/practice_py
# edits: forward completed as in the blitz tutorial it follows (the page was cut off); one 32x32 input, a target and one SGD step
# gathered: 2026-12-07
import torch
import torch.nn as nn  # NN module, nn by convention
import torch.nn.functional as F  # Functions, F by convention

class Net(nn.Module):

    def __init__(self):
        
        super(Net, self).__init__()  # Call the parent consructor to initialise stuff.
        
        # 1 input image channel, 6 output channels, 3x3 square convolution kernel:
        # >> Conv2d(in_channels, out_channels, kernel_size[, ...])
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)  # Note now it becomes 6 "channels" input.
        
        # An affine operation: y = Wx + b
        # Linear(in_features, out_features, bias=True)
        self.fc1 = nn.Linear(16 * 6 * 6, 120)  # 6*6 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):  # x is the *input*.
        
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square you can only specify a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # all dimensions except the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features

net = Net()
print(net)
params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight
input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)
target = torch.randn(10)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()
loss = criterion(out, target)
net.zero_grad()
loss.backward()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
optimizer.step()
