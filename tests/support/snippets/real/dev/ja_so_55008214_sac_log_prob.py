# source: https://ja.stackoverflow.org.cn/questions/55008214
# edits: the method body as a function of a small policy's mean and log_std; device is the CPU; a loss and backward added
# gathered: 2026-12-07
import torch
from torch.distributions import Normal
device = torch.device("cpu")
epsilon = 1e-6
mean_layer = torch.nn.Linear(3, 2)
log_std_layer = torch.nn.Linear(3, 2)
def evaluate(state):
    mean = mean_layer(state)
    log_std = log_std_layer(state).clamp(-20, 2)
    std = log_std.exp()
    normal = Normal(0, 1)
    z = normal.sample()
    action = torch.tanh(mean+ std*z.to(device))
    log_prob = Normal(mean, std).log_prob(mean+ std*z.to(device)) - torch.log(1 - action.pow(2) + epsilon)
    return action, log_prob, z, mean, log_std
action, log_prob, z, mean, log_std = evaluate(torch.randn(4, 3))
loss = (log_prob - action).mean()
loss.backward()
