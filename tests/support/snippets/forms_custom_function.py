# A custom autograd function: forward saves its inputs, backward uses them by name
import torch


class MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        ctx.scale = 2.0
        return x * w * ctx.scale + b

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output * w * ctx.scale
        if ctx.needs_input_grad[1]:
            grad_w = grad_output * x * ctx.scale
        if ctx.needs_input_grad[2]:
            grad_b = grad_output
        return grad_x, grad_w, grad_b


torch.manual_seed(0)
x = torch.randn(3)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
y = MulAdd.apply(x, w, b)
loss = y.pow(2).sum()
loss.backward()
print(w.grad, b.grad)
