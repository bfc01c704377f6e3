# source: https://github.com/anubhavashok/N2N/issues/12
# edits: probs, actions, avgR and b defined before the posted lines; loss.backward() added at the end
import torch

probs = torch.softmax(torch.randn(3, 4, requires_grad=True), dim=1)
actions = torch.distributions.Categorical(probs).sample()
avgR = 0.7
b = 0.5

if isinstance(actions, list):
    for action in actions:
        m=torch.distributions.Categorical(probs)
        actionloss=-m.log_prob(action)*(avgR-b)
else:
    m = torch.distributions.Categorical(probs)
    actionloss = -m.log_prob(actions) * (avgR - b)
actionloss.mean().backward()
