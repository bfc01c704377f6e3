# source: https://github.com/pytorch/pytorch/issues/76185
# edits: none
import torch
from torch.autograd import Function, gradcheck, gradgradcheck


class MyFn(Function):
    @staticmethod
    def forward(ctx, inp):
        temp = inp * 2
        out = temp * 3
        ctx.temp = temp
        ctx.inp = inp
        return out

    @staticmethod
    def backward(ctx, gO):
        return gO * torch.full_like(gO, 3) * ctx.temp / ctx.inp


inp = torch.rand(10, dtype=torch.float64, requires_grad=True)

gradcheck(MyFn.apply, inp)
gradgradcheck(MyFn.apply, inp)
