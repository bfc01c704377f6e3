# source: https://github.com/pytorch/pytorch/issues/18619
# edits: the last print's text completed (the excerpt ends inside it)
import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, _ = ctx.saved_tensors
        return grad_output * 2 * x


# this is equivalent, but uses the output of .forward() in .backward()
class Double2(Double):
    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * 2 * y / x


double = Double.apply
double2 = Double2.apply

x = torch.tensor(2).double().requires_grad_()

print(
    'gradcheck',
    torch.autograd.gradcheck(double, x),
    torch.autograd.gradgradcheck(double, x),
    torch.autograd.gradcheck(double2, x),
    torch.autograd.gradgradcheck(double2, x),
)

y = double(x)
torch.autograd.grad(y, x, create_graph=True)
torch.autograd.grad(y, x)
print('double() ok')

y = double2(x)
torch.autograd.grad(y, x, create_graph=True)
torch.autograd.grad(y, x)
print('double2() ok')
