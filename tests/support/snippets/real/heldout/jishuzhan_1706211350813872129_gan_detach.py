# source: https://jishuzhan.net/article/1706211350813872129
# edits: 1000 epochs cut to 3; the generator step's last lines, cut off in the stored copy, completed as the text describes (BCE against real labels, backward, step)
# gathered: 2026-12-07b
import torch
import torch.nn as nn
import torch.optim as optim

# 生成器
class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.model = nn.Sequential(
            nn.Linear(10, 50),
            nn.ReLU(),
            nn.Linear(50, 1)
        )
    
    def forward(self, x):
        return self.model(x)

# 判别器
class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.model = nn.Sequential(
            nn.Linear(1, 50),
            nn.ReLU(),
            nn.Linear(50, 1),
            nn.Sigmoid()
        )
    
    def forward(self, x):
        return self.model(x)

# 实例化生成器和判别器
G = Generator()
D = Discriminator()

# 定义优化器和损失函数
optimizer_G = optim.Adam(G.parameters(), lr=0.001)
optimizer_D = optim.Adam(D.parameters(), lr=0.001)
loss_func = nn.BCELoss()

# 训练循环
for epoch in range(3):
    # 训练判别器
    D.zero_grad()
    real_data = torch.randn(100, 1)  # 真实数据
    real_labels = torch.ones(100, 1) # 真实标签
    fake_data = G(torch.randn(100, 10)).detach() # 使用detach(), 因为我们不想在这一步更新生成器
    fake_labels = torch.zeros(100, 1) # 假的标签

    real_loss = loss_func(D(real_data), real_labels)
	# real_loss = loss_func(D(real_data.detach), real_labels)
    fake_loss = loss_func(D(fake_data), fake_labels)
    d_loss = real_loss + fake_loss
    d_loss.backward()
    optimizer_D.step()

    # 训练生成器
    G.zero_grad()
    noise_data = torch.randn(100, 10) # 噪声数据
    fake_data = G(noise_data) # 没有使用detach(), 因为我们想在这一步更新生成器
    g_loss = loss_func(D(fake_data), real_labels)
    g_loss.backward()
    optimizer_G.step()
