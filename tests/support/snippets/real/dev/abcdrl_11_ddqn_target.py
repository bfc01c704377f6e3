# source: https://github.com/sdpkjc/abcdrl/pull/11
# edits: a tiny model, model_t and a data batch stand in for the agent's; the TD loss and backward added after the two posted lines
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def value(self, x):
        return self.net(x)

class Batch:
    observations = torch.randn(8, 4)
    next_observations = torch.randn(8, 4)
    actions = torch.randint(0, 2, (8, 1))
    rewards = torch.randn(8)

class Agent:
    def __init__(self):
        self.model = QNet()
        self.model_t = copy.deepcopy(self.model)

    def learn(self, data):
        _, target_argmax = self.model.value(data.next_observations).max(dim=1)
        target_max = self.model_t.value(data.next_observations).gather(1, target_argmax.unsqueeze(1)).squeeze()
        td_target = data.rewards + 0.99 * target_max
        old_val = self.model.value(data.observations).gather(1, data.actions).squeeze()
        loss = F.mse_loss(td_target, old_val)
        loss.backward()
        return loss

agent = Agent()
print(agent.learn(Batch()))
