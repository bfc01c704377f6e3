# source: https://github.com/Alex-xixiang/LLM101
# edits: the notebook's three code cells as one script
import torch
import torch.nn as nn


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=2.0):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin

    def forward(self, output1, output2, label):
        """
        参数:
        output1: 第一个样本的特征向量 shape=(batch_size, feature_dim)
        output2: 第二个样本的特征向量 shape=(batch_size, feature_dim)
        label: 相似性标签 (1=相似, 0=不相似) shape=(batch_size,)
        """
        # 计算欧氏距离
        euclidean_distance = torch.nn.functional.pairwise_distance(output1, output2)
        
        # 对于相似样本(y=1): loss = distance^2
        # 对于不相似样本(y=0): loss = max(0, margin - distance)^2
        loss_contrastive = torch.mean(
            label * torch.pow(euclidean_distance, 2) +  # 相似样本的损失
            (1 - label) * torch.pow(torch.clamp(self.margin - euclidean_distance, min=0.0), 2)  # 不相似样本的损失
        )
        
        return loss_contrastive


### inference
# 使用示例
batch_size = 2
feature_dim = 128

# 随机生成样本数据
output1 = torch.randn(batch_size, feature_dim)
output2 = torch.randn(batch_size, feature_dim)
# 随机生成标签
label = torch.randint(0, 2, (batch_size,)).float()

# 初始化损失函数
criterion = ContrastiveLoss(margin=2.0)
# 计算损失
loss = criterion(output1, output2, label)
print("criterion:",criterion)
print("label:",label)
print("loss:",loss)
