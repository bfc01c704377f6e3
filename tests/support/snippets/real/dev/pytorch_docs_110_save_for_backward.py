# source: https://pytorch.org/docs/1.10/generated/torch.autograd.function.FunctionCtx.save_for_backward.html
# edits: the doctest as a script; a backward() on d appended
# gathered: 2026-12-07
import torch
from torch.autograd import Function
class Func(Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, z: int):
        w = x * y * z
        out = x * y + y * z + w
        ctx.save_for_backward(x, y, out)
        ctx.z = z  # z is not a tensor
        ctx.w = w  # w is neither input nor output
        return out
    @staticmethod
    def backward(ctx, grad_out):
        x, y, out = ctx.saved_tensors
        z = ctx.z
        gx = grad_out * (y + y * z)
        gy = grad_out * (x + z + x * z)
        gz = None
        return gx, gy, gz
a = torch.tensor(1., requires_grad=True, dtype=torch.double)
b = torch.tensor(2., requires_grad=True, dtype=torch.double)
c = 4
d = Func.apply(a, b, c)
d.backward()
