# source: https://tbr8.org/%e5%a6%82%e4%bd%95%e8%a7%a3%e5%86%b3tensor-object-has-no-attribute-zero_grad%e7%9b%b4%e6%8e%a5%e5%b0%86tensor%e7%9a%84%e6%a2%af%e5%ba%a6%e7%bd%ae%e4%b8%ba0
# edits: none (the article's first solution's listing)
# gathered: 2026-12-07b
import torch
import torch.nn as nn
import torch.optim as optim
# 1. 初始化模型和优化器
model = nn.Linear(10, 1)
optimizer = optim.Adam(model.parameters(), lr=0.001)
# 2. 训练循环中的标准步骤
# --- 训练步骤开始 ---
# 在每次反向传播之前,必须清零梯度,防止梯度累积
optimizer.zero_grad()
# 模拟前向传播和损失计算
input_data = torch.randn(1, 10)
output = model(input_data)
loss = output.sum()
# 反向传播
loss.backward()
# 参数更新
optimizer.step()
# --- 训练步骤结束 ---
print("梯度已通过 optimizer.zero_grad() 成功清零")
