# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
# edits: the notebook's five autograd cells, one after the other
# gathered: 2026-12-07b
# autograd.grad() - Gradient without .backward() 

import torch
x = torch.tensor([2.0], requires_grad=True)
y = x ** 3

grad = torch.autograd.grad(y, x)  # Returns (3x²,) → (12.0,)
print("dy/dx =", grad[0])         # tensor([12.])

# Higher-Order Gradients (grad of a grad, Second derivative)
x = torch.tensor([2.0], requires_grad=True)
y = x**3       # dy/dx = 3x² = 12

# First derivative
dy_dx = torch.autograd.grad(y, x, create_graph=True)[0]

# Second derivative (d²y/dx² = 6x = 12)
d2y_dx2 = torch.autograd.grad(dy_dx, x)[0]

print("Second derivative:", d2y_dx2)  # tensor([12.])

# Custom Autograd function - manually define the forward and backward passes of a function 

# Define Square with custom backward

from torch.autograd import Function

class Square(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input ** 2

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 2 * input

x = torch.tensor([3.0], requires_grad=True)
square = Square.apply
y = square(x)
y.backward()
print("Custom grad:", x.grad)  # Should be 2 * 3 = 6

# Compute Jacobian and Hessian

from torch.autograd.functional import hessian

def f(x):
    return (x[0] ** 2 + x[1] ** 3)

x = torch.tensor([1.0, 2.0], requires_grad=True)
hess = hessian(f, x)
print("Hessian matrix:\n", hess)

# Hooks - inspect or modify gradients
# Print gradient as it flows

x = torch.tensor([2.0], requires_grad=True)

def print_grad(grad):
    print("Gradient flowing through:", grad)

x.register_hook(print_grad)

y = x**2 + 3*x
y.backward()
