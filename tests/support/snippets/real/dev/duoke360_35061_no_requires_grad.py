# source: https://duoke360.com/post/35061
# edits: the first listing only
# gathered: 2026-12-07
import torch
x = torch.tensor([1.0]) # 默认requires_grad=False
y = x * 2
y.backward() # 错误!x未启用梯度跟踪
