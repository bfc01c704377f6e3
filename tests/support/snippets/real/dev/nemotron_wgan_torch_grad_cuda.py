# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
# edits: a forum post ("Calculating the Gradients for WGAN-GP", 2021) as quoted there; a tiny critic, interpolated batch and self.use_cuda stand in for the trainer's; the posted call kept as it was
# gathered: 2026-12-07
import torch
from torch.autograd import grad as torch_grad


class Trainer:
    def __init__(self):
        self.use_cuda = torch.cuda.is_available()
        self.D = torch.nn.Sequential(torch.nn.Linear(4, 1))

    def _gradient_penalty(self, real_data, generated_data):
        alpha = torch.rand(real_data.size(0), 1)
        interpolated = alpha * real_data + (1 - alpha) * generated_data
        interpolated.requires_grad_(True)
        prob_interpolated = self.D(interpolated)
        gradients = torch_grad(
            outputs=prob_interpolated,
            inputs=interpolated,
            grad_outputs=torch.ones(prob_interpolated.size()).cuda() if self.use_cuda else torch.ones(prob_interpolated.size()),
            create_graph=True,
            retain_graph=True
        )[0]
        gradients = gradients.view(real_data.size(0), -1)
        gradients_norm = torch.sqrt(torch.sum(gradients ** 2, dim=1) + 1e-12)
        return 10 * ((gradients_norm - 1) ** 2).mean()


trainer = Trainer()
gp = trainer._gradient_penalty(torch.randn(5, 4), torch.randn(5, 4))
gp.backward()
