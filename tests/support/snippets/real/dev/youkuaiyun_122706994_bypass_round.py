# source: https://blog.youkuaiyun.com/leelitian3/article/details/122706994
# edits: the import of torch and a z3 leaf added; a backward through each of the post's two versions appended
# gathered: 2026-12-07b
import torch
from torch.autograd import Function
class BypassRound(Function):
    @staticmethod
    def forward(ctx, inputs):
        return torch.round(inputs)
    @staticmethod
    def backward(ctx, grad_output):
        # 这里的grad_output是round之后的tensor的梯度,直接将它作为round之前tensor的梯度
        return grad_output
# Function.apply的别名
bypass_round = BypassRound.apply
# demo
z3 = torch.randn(4, requires_grad=True)
z3_rounded = bypass_round(z3)
z3_rounded.sum().backward()

def ste_round(x):
    return torch.round(x) - x.detach() + x

ste_round(z3).sum().backward()
print(z3.grad)
