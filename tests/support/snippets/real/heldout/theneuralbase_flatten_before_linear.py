# source: https://theneuralbase.pages.dev/pytorch/learn/intermediate/flattening-before-linear-layers/
# edits: the last line completed after the excerpt's end (a 32x32 image batch and the model applied); batch 32 -> 4
import torch
import torch.nn as nn
batch_size = 4
conv_output = torch.randn(batch_size, 64, 7, 7)
print(f"Conv output shape: {conv_output.shape}")
flattened = conv_output.flatten(start_dim=1)
print(f"After flatten(start_dim=1): {flattened.shape}")
print(f"Total features: {64 * 7 * 7}")
linear_layer = nn.Linear(in_features=3136, out_features=10)
output = linear_layer(flattened)
print(f"Linear layer output shape: {output.shape}")
model = nn.Sequential(
    nn.Conv2d(in_channels=3, out_channels=64, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(kernel_size=2),
    nn.Flatten(start_dim=1),
    nn.Linear(in_features=64 * 16 * 16, out_features=10)
)
input_tensor = torch.randn(batch_size, 3, 32, 32)
output = model(input_tensor)
print(output.shape)
