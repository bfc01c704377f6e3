# source: https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html
# edits: none
import torch

x = torch.tensor([1.0], requires_grad=True)
y = torch.sin(x)

z = y.item()  # 将张量转换为标量值

z.backward()  # 尝试计算z相对于x的梯度
