# source: https://www.oryoy.com/news/pytorch-shen-du-xue-xi-zhang-wo-shi-fang-loss-zhi-zhen-de-ji-qiao-bi-mian-nei-cun-xie-lou.html
# edits: the article's listings 3.1, 3.2 and 3.3, one after the other
# gathered: 2026-12-07b
import torch
# 创建模型和损失函数
model = torch.nn.Linear(10, 1)
criterion = torch.nn.MSELoss()
# 计算损失
output = model(torch.randn(1, 10))
loss = criterion(output, torch.randn(1, 1))
# 释放Loss指针
loss = loss.detach()

# 清零梯度
loss.backward()
model.zero_grad()

# 删除Loss对象
del loss
