# source: https://github.com/Kostis-S-Z/exploring_meta/issues/16
# kind: no-grad-fn
# edits: the PPO loss assembled from Python numbers (.item()) into a new tensor before
#   backward, tiny policy
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
states, actions = torch.randn(5, 4), torch.tensor([0, 1, 1, 0, 1])
advantages = torch.randn(5)
log_probs = torch.log_softmax(policy(states), dim=1)[torch.arange(5), actions]
ratio = torch.exp(log_probs - log_probs.detach())
policy_loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
loss = torch.tensor(policy_loss.item() + 0.01)
optimizer.zero_grad()
loss.backward()
optimizer.step()
