# source: https://github.com/BaiTheBest/SparseLLM/issues/13
# edits: s, s_batch, chunk, s_learning_rate and loss_s defined before the posted lines (small random tensors)
import torch

s = torch.zeros(4, 6, dtype=torch.float16)
chunk = slice(0, 3)
s_learning_rate = 0.1
s_batch = torch.randn(4, 3, requires_grad=True)
loss_s = (s_batch ** 2).sum()

loss_s.backward()
s_batch -= s_learning_rate * s_batch.grad
s_batch.grad.zero_()
s[:,chunk] = s_batch.detach().to(dtype=torch.float16)
