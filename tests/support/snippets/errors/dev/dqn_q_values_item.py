# source: https://github.com/pytorch/pytorch/issues/34535
# kind: no-grad-fn
# edits: a DQN update whose Q-values are gathered as Python numbers (.item()) into a new tensor;
#   tiny network, random transitions
import torch
import torch.nn as nn

torch.manual_seed(0)
policy_net = nn.Linear(4, 2)
optimizer = torch.optim.RMSprop(policy_net.parameters())
states, actions, rewards = torch.randn(3, 4), [0, 1, 1], torch.randn(3)
q_values = torch.tensor([policy_net(states[i])[actions[i]].item() for i in range(3)])
loss = nn.functional.smooth_l1_loss(q_values, rewards)
optimizer.zero_grad()
loss.backward()
optimizer.step()
