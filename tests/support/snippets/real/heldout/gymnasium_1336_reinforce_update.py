# source: https://github.com/Farama-Foundation/Gymnasium/issues/1336
# edits: the posted update() method inside a small agent (a linear Gaussian policy, gamma, optimizer) with one episode of three steps filling probs and rewards
import torch
import torch.nn as nn
from torch.distributions.normal import Normal

class REINFORCE:
    def __init__(self):
        self.gamma = 0.99
        self.net = nn.Linear(4, 2)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=1e-4)
        self.probs = []
        self.rewards = []

    def sample_action(self, state):
        mean, log_std = self.net(state)
        distrib = Normal(mean, torch.exp(log_std))
        action = distrib.sample()
        self.probs.append(distrib.log_prob(action))
        return action

    def update(self):
        """Updates the policy network's weights."""
        running_g = 0
        gs = []

        # Discounted return (backwards) - [::-1] will return an array in reverse
        for R in self.rewards[::-1]:
            running_g = R + self.gamma * running_g
            gs.insert(0, running_g)

        deltas = torch.tensor(gs)

        log_probs = torch.stack(self.probs)

        # ERROR HERE, why calculate the mean?
        # Calculate the mean of log probabilities for all actions in the episode
        log_prob_mean = log_probs.mean()

        # Update the loss with the mean log probability and deltas
        # Now, we compute the correct total loss by taking the sum of the element-wise products.
        loss = -torch.sum(log_prob_mean * deltas)

        # Update the policy network
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

        # Empty / zero out all episode-centric/related variables
        self.probs = []
        self.rewards = []

agent = REINFORCE()
for t in range(3):
    agent.sample_action(torch.randn(4))
    agent.rewards.append(1.0)
agent.update()
