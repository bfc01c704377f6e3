# source: https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html
# edits: torch.nn.Module instead of labml_helpers' Module; a tiny critic and batch call it
# gathered: 2026-12-07
import torch
import torch.autograd
from torch.nn import Module


class GradientPenalty(Module):
    def forward(self, x: torch.Tensor, f: torch.Tensor):
        batch_size = x.shape[0]
        gradients, *_ = torch.autograd.grad(outputs=f,
                                            inputs=x,
                                            grad_outputs=f.new_ones(f.shape),
                                            create_graph=True)
        gradients = gradients.reshape(batch_size, -1)
        norm = gradients.norm(2, dim=-1)
        return torch.mean((norm - 1) ** 2)


critic = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
x = torch.randn(3, 4, requires_grad=True)
f = critic(x)
penalty = GradientPenalty()
loss = f.mean() + 10.0 * penalty(x, f)
loss.backward()
