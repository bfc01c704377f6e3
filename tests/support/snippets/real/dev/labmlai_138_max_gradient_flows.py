# source: https://github.com/labmlai/annotated_deep_learning_paper_implementations/issues/138
# edits: import torch added
import torch

t = torch.tensor([0., 1., 2., 3.], requires_grad=True)
m, _ = torch.max(t, dim=-1)
m.backward()
print(t.grad)
