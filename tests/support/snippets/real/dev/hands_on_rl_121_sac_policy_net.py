# source: https://github.com/boyu-ai/Hands-on-RL/issues/121
# edits: imports added; a policy, a batch of states, a critic stand-in and the actor loss after the posted class
import torch
import torch.nn.functional as F
from torch.distributions import Normal

class PolicyNetContinuous(torch.nn.Module):
    def __init__(self, state_dim, hidden_dim, action_dim, action_bound):
        super(PolicyNetContinuous, self).__init__()
        self.fc1 = torch.nn.Linear(state_dim, hidden_dim)
        self.fc_mu = torch.nn.Linear(hidden_dim, action_dim)
        self.fc_std = torch.nn.Linear(hidden_dim, action_dim)
        self.action_bound = action_bound

    def forward(self, x):
        x = F.relu(self.fc1(x))
        mu = self.fc_mu(x)
        std = F.softplus(self.fc_std(x))
        dist = Normal(mu, std)
        normal_sample = dist.rsample()  # rsample()是重参数化采样
        log_prob = dist.log_prob(normal_sample)
        action = torch.tanh(normal_sample)
        # 计算tanh_normal分布的对数概率密度
        log_prob = log_prob - torch.log(1 - torch.tanh(action).pow(2) + 1e-7)
        action = action * self.action_bound
        return action, log_prob

actor = PolicyNetContinuous(3, 8, 1, 2.0)
critic = torch.nn.Linear(4, 1)
states = torch.randn(5, 3)
alpha = 0.2
new_actions, log_prob = actor(states)
q_value = critic(torch.cat([states, new_actions], dim=1))
actor_loss = torch.mean(alpha * log_prob - q_value)
actor_loss.backward()
print(actor.fc_mu.weight.grad)
