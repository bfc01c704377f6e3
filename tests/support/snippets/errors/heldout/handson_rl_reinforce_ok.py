# source: https://github.com/boyu-ai/Hands-on-RL/issues/7
# kind: no-advice
# edits: REINFORCE.update on a tiny policy: one zero_grad, a backward per step, one step (the
#   accumulation is on purpose: no advice expected)
import torch
import torch.nn as nn

torch.manual_seed(0)
policy_net = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=1))
optimizer = torch.optim.Adam(policy_net.parameters(), lr=1e-3)


def update(states, actions, rewards, gamma=0.98):
    G = 0
    optimizer.zero_grad()
    for i in reversed(range(len(rewards))):
        state = states[i].unsqueeze(0)
        action = torch.tensor([[actions[i]]])
        log_prob = torch.log(policy_net(state).gather(1, action))
        G = gamma * G + rewards[i]
        loss = -log_prob * G
        loss.backward()
    optimizer.step()


for episode in range(2):
    update(torch.randn(3, 4), [0, 1, 0], [1.0, 0.0, 1.0])
