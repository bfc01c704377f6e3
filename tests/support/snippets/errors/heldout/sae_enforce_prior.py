# source: https://github.com/evanmy/sae/issues/5
# kind: wrong-grad-count
# edits: the EnforcePrior function reduced to its shape (a prior tensor passed with the
#   input), tiny sizes
import torch


class EnforcePrior(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, prior):
        ctx.save_for_backward(prior)
        return x * prior

    @staticmethod
    def backward(ctx, grad_output):
        (prior,) = ctx.saved_tensors
        return grad_output * prior


x = torch.randn(3, requires_grad=True)
prior = torch.rand(3)
loss = EnforcePrior.apply(x, prior).sum()
loss.backward()
