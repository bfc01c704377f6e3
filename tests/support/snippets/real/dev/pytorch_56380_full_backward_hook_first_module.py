# source: https://github.com/pytorch/pytorch/issues/56380
# edits: none (the reproduction)
# gathered: 2026-12-07b
import torch
import torch.nn as nn
import torch.nn.functional as F


class TestModule(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        internal_size = 5
        self.linear1 = nn.Linear(input_size, internal_size)
        self.linear2 = nn.Linear(internal_size, output_size)

    def forward(self, x):
        x = self.linear1(x)
        x = F.relu(x)
        x = self.linear2(x)
        return x


model = TestModule(4, 3)


def print_hook(module: nn.Module, _inputs, _outputs):
    print('hook triggered on', module)


for module in model.modules():
    if isinstance(module, nn.Linear):
        module.register_full_backward_hook(print_hook)
        print('added hook to', module)

x, y = torch.rand(size=(20, 4)), torch.randint(low=0, high=3, size=(20,))
loss = F.cross_entropy(model(x), y)

print('backward started')
loss.backward()
print('backward complete')
