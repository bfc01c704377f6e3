# source: https://github.com/Lightning-AI/pytorch-lightning/issues/19910
# kind: no-grad-fn
# edits: the test loop Lightning runs (under inference mode) with the model's manual backward
#   in its test_step, written without Lightning
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)


def test_step(batch):
    x, y = batch
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    return loss


with torch.inference_mode():
    for _ in range(2):
        test_step((torch.randn(3, 4), torch.randn(3, 1)))
