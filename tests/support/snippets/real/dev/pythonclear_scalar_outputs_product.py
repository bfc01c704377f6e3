# source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
# edits: none (the article's first listing)
# gathered: 2026-12-07b
import torch
x = torch.tensor([5., 5.], requires_grad=True)
y = torch.tensor([8., 8.], requires_grad=True)
A=x*y
#calculate the gradient
A.backward()
print(x.grad)
print(y.grad)
