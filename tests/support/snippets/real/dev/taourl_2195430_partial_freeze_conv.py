# source: https://taourl.com/read-2195430.html
# edits: indentation the page lost restored
# gathered: 2026-12-07b
import torch

import torch.nn as nn

class PartialFreezeConv(nn.Module):

    def __init__(self, in_channels, out_channels, kernel_size):

        super(PartialFreezeConv, self).__init__

        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

        # Freeze the first half of the filters

        num_filters = out_channels

        freeze_indices = range(num_filters // 2)

        for i in freeze_indices:

            self.conv.weight.data[i].requires_grad = False

            if self.conv.bias is not None:

                self.conv.bias.data[i].requires_grad = False

    def forward(self, x):

        return self.conv(x)

# Example usage

model = PartialFreezeConv(3, 6, 3)

for name, param in model.named_parameters:

    print(f"{name}: requires_grad={param.requires_grad}")
