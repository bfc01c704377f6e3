# source: https://github.com/starry-sky6688/MADDPG/issues/27
# edits: tiny actor and critic networks, a batch of states and the two losses stand in for the agent's; the posted six lines as written (self. dropped), in the order the issue moved them to
import torch
import torch.nn as nn

actor = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())
critic = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)

state = torch.randn(4, 3)
action = torch.randn(4, 2)
target_q = torch.randn(4, 1)
q_value = critic(torch.cat([state, action], dim=1))
critic_loss = (target_q - q_value).pow(2).mean()
actor_loss = - critic(torch.cat([state, actor(state)], dim=1)).mean()

critic_optim.zero_grad()
critic_loss.backward()
critic_optim.step()

actor_optim.zero_grad()
actor_loss.backward()
actor_optim.step()
