# source: https://github.com/jy0205/Pyramid-Flow/issues/242
# kind: wrong-grad-count
# edits: _AllToAll on one process: the exchange is a transpose; its five non-ctx inputs kept
import torch


class _AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, group, input_, world_size, scatter_dim, gather_dim):
        ctx.group, ctx.world_size = group, world_size
        ctx.scatter_dim, ctx.gather_dim = scatter_dim, gather_dim
        return input_.transpose(scatter_dim, gather_dim).contiguous()

    @staticmethod
    def backward(ctx, grad_output):
        grad = grad_output.transpose(ctx.scatter_dim, ctx.gather_dim).contiguous()
        return None, grad, None, None


x = torch.randn(2, 3, requires_grad=True)
out = _AllToAll.apply(None, x, 1, 0, 1)
out.sum().backward()
