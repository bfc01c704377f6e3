# source: https://github.com/sczhou/STFAN/issues/8
# kind: wrong-grad-count
# edits: KernelConv2DFunction as a per-pixel weighting with a kernel_size argument, on CPU
import torch


class KernelConv2DFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, kernel, kernel_size):
        ctx.save_for_backward(input, kernel)
        ctx.kernel_size = kernel_size
        return input * kernel

    @staticmethod
    def backward(ctx, grad_output):
        input, kernel = ctx.saved_tensors
        grad_input = grad_output * kernel
        grad_kernel = grad_output * input
        return grad_input, grad_kernel


torch.manual_seed(0)
inp = torch.randn(1, 3, 4, requires_grad=True)
ker = torch.randn(1, 3, 4, requires_grad=True)
out = KernelConv2DFunction.apply(inp, ker, 3)
out.sum().backward()
