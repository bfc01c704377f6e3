# source: https://github.com/huggingface/torchMoji/issues/21
# kind: no-grad-fn
# edits: model_def's forward with `if return_tensor: outputs = outputs.data` (lines 249-250)
#   in a tiny model; the finetune loop calls backward on its loss
import torch
import torch.nn as nn


class TorchMoji(nn.Module):
    def __init__(self):
        super().__init__()
        self.output_layer = nn.Linear(4, 2)

    def forward(self, x, return_tensor=True):
        outputs = self.output_layer(x)
        if return_tensor:
            outputs = outputs.data
        return outputs


torch.manual_seed(0)
model = TorchMoji()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(torch.randn(3, 4)), torch.tensor([0, 1, 1]))
    loss.backward()
    optimizer.step()
