# source: https://github.com/FromEssence/AI_Pytorch
# edits: the notebook's two cells, one after the other
# gathered: 2026-12-07b
'''
例1: 1）计算函数`y=2x^3`的二阶导数，
     2）对一阶导函数做梯度下降。
下面给出两种实现方法
'''
import torch
from torch.optim import SGD

# 准备数据
# 设自变量x为2，后面对它求导
x = torch.ones(1)
x[0] = 2
x.requires_grad = True

# 函数
y = 2*x*x*x

'''
方法1：
    直接调用自动微分函数获得梯度
'''
d1 = torch.autograd.grad(y, x, create_graph=True)[0]
print(d1.grad)
print('y关于x一阶导：',d1)
d2 = torch.autograd.grad(d1, x)[0] #因为不需要求三阶导，故这里不再保存梯度计算图
print('y关于x二阶导：', d2)

'''
方法2
'''
import torch
from torch.optim import SGD

# 准备数据
# 设自变量x为2，后面对它求导
x = torch.ones(1)
x[0] = 2
x.requires_grad = True

# 函数
y = 2*x*x*x

'''
方法2：
    backward()反向传播中获得梯度
'''
y.backward(create_graph=True,retain_graph=True)

d1 = x.grad
print('y关于x一阶导：',d1)

# 注意先清空x的梯度，否则会累加，得到24+24=48
x.grad=None
d1.backward(create_graph=True)
print('y关于x二阶导：', x.grad)
