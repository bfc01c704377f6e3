# source: https://blog.51cto.com/u_16175525/6637440
# edits: none (the article's failing listing)
# gathered: 2026-12-07b
import torch

# 创建一个接受float类型数据的模型
model = torch.nn.Linear(1, 1)

# 创建一个double类型的输入数据
input_data = torch.tensor([1.0], dtype=torch.double)

# 将double类型的输入数据传递给模型
output = model(input_data)
