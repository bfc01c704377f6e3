# source: https://github.com/pranz24/pytorch-soft-actor-critic/issues/14
# edits: the posted line inside a sample() of a small Gaussian policy (mean/log_std heads, epsilon, action_scale, as in the repository); one actor loss and backward added
import torch
import torch.nn as nn
from torch.distributions import Normal

epsilon = 1e-6

class GaussianPolicy(nn.Module):
    def __init__(self):
        super(GaussianPolicy, self).__init__()
        self.linear = nn.Linear(3, 8)
        self.mean_linear = nn.Linear(8, 1)
        self.log_std_linear = nn.Linear(8, 1)
        self.action_scale = torch.tensor(1.)

    def sample(self, state):
        x = torch.relu(self.linear(state))
        mean, log_std = self.mean_linear(x), self.log_std_linear(x).clamp(-20, 2)
        normal = Normal(mean, log_std.exp())
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(1 - action.pow(2) + epsilon)
        log_prob = log_prob.sum(1, keepdim=True)
        return action, log_prob

policy = GaussianPolicy()
action, log_prob = policy.sample(torch.randn(4, 3))
policy_loss = (0.2 * log_prob - action).mean()
policy_loss.backward()
print(policy.mean_linear.weight.grad)
