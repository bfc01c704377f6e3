# source: https://github.com/pytorch/pytorch/issues/1776
# edits: the last lines completed after the excerpt's end (x, then apply and backward)
import torch

class exampleFct(torch.autograd.Function):
    @staticmethod
    def forward(self, x):
        self.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(self, dy):
        x, = self.saved_variables
        with torch.enable_grad():
            y = x ** 2
            return torch.autograd.grad(y, x, torch.ones_like(y))


x = torch.tensor([[3, 4]], requires_grad=True, dtype=torch.float)
m = exampleFct.apply(x).sum().backward()
print(x.grad)
