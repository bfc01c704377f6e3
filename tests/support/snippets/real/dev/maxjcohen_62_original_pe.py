# source: https://github.com/maxjcohen/transformer/issues/62
# edits: the elided middle of the function (the PE tensor) filled in; a call and a use with gradients added
import torch

def generate_original_PE(length: int, d_model: int) -> torch.Tensor:
    PE = torch.zeros((length, d_model))

    pos = torch.arange(length).unsqueeze(1)

    PE[:, 0::2] = torch.sin(pos / torch.pow(1000, torch.arange(0, d_model, 2, dtype=torch.float32)/d_model))

    PE[:, 1::2] = torch.cos(pos / torch.pow(1000, torch.arange(1, d_model, 2, dtype=torch.float32)/d_model))

    return PE

x = torch.randn(2, 6, 8, requires_grad=True)
y = x + generate_original_PE(6, 8)
y.pow(2).sum().backward()
print(x.grad.shape)
