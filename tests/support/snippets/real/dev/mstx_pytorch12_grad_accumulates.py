# source: http://www.mstx.cn/pytorch/pytorch12.html
# edits: none (the article's listing)
# gathered: 2026-12-07b
import torch
x = torch.tensor([[1., -1.], [1., 1.]], requires_grad=True)
print("初始情况下,梯度值为:", x.grad)
out = x.pow(2).sum()
# 计算图需要保存,否则第二执行backward则会报错
out.backward(retain_graph=True)
print("第1次执行backward后的梯度值为:", x.grad)
out.backward()
print("第2次执行backward后的梯度值为:", x.grad)
