# source: https://github.com/pytorch/examples/pull/722
# kind: version-counter
# edits: reinforce.py's finish_episode with the update taken at every time step over the one
#   rollout's saved log-probs (the per-step update the thread discusses); tiny policy
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Softmax(dim=-1))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
saved_log_probs, rewards = [], []
for t in range(3):
    probs = policy(torch.randn(4))
    action = torch.multinomial(probs, 1).item()
    saved_log_probs.append(torch.log(probs[action]))
    rewards.append(1.0)
R, returns = 0.0, []
for r in rewards[::-1]:
    R = r + 0.99 * R
    returns.insert(0, R)
for log_prob, R in zip(saved_log_probs, returns):
    optimizer.zero_grad()
    loss = -log_prob * R
    loss.backward(retain_graph=True)
    optimizer.step()
