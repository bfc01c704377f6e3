# source: https://velog.io/@jsyeon/Autograd자동미분
# edits: the typo tensror in the page's expected output left out (it was output, not code)
# gathered: 2026-12-07
import torch
a = torch.tensor([2,3], requires_grad=True)
b = torch.tensor([6,4], requires_grad=True)
Q = 3*a**3-b**2
external_grad = torch.tensor([1,1]) # 미분하는 값이 2개가 나와야 하기 때문에 (a에 관한 미분, b에 관한 미분) gradient 크기를 맞춰주기 위함
Q.backward(gradient=external_grad)
print(a.grad)
print(b.grad)
