# source: https://e-com-net.com/article/1721381009724878848.htm
# edits: bare expressions printed
# gathered: 2026-12-07
import torch
print(torch.__version__) #pytorch的版本号
print(torch.empty(5,3))
print(torch.rand(5,3))#值在0到1
print(torch.randn(5,3))#标准正态分布,值在-1到1
print(torch.zeros(5,3,dtype=torch.long))
print(torch.zeros(5,3).long())
print(torch.tensor([1.0,2.0]))
x=torch.tensor([6,6],dtype=torch.double)
x_new=x.new_zeros(5,3) #数据类型也是float64
x_new=x.new_ones(5,3,dtype=torch.float) #数据类型改为float32
x=torch.randn(6,6,dtype=torch.float)
x_new=torch.ones_like(x,dtype=torch.int32) #_like代表新tensor形状相同
print(x_new.shape)
print(x_new.size())
x=torch.rand([5,3])
y=torch.rand([5,3])
print(x+y)
print(torch.add(x,y))
a = torch.tensor([3.0, 1.0])
print(id(a)) # 2112716404344
a = a.exp()
print(id(a)) # 2112715008904
