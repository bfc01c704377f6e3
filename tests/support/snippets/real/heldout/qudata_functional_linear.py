# source: https://qudata.com/ml/ru/NN_Base_Torch_NN_Ref.html
# edits: the import of torch added; a requires_grad on W and a backward appended
# gathered: 2026-12-07
import torch
import torch.nn.functional as F
N, nX, nY = 1, 2, 3 # число примеров, входов, выходов
X = torch.ones(N, nX) # матрица примеров
W = torch.ones(nY, nX) # матрица весов
B = torch.ones(nY) # вектор смещений
Y = F.linear(X, W, B) # [[3., 3., 3.]]
Y = X.mm(W.t())+B # тоже самое
Y = torch.addmm(B,X,W.t()) # тоже самое
W.requires_grad_(True)
F.linear(X, W, B).sum().backward()
print(W.grad)
