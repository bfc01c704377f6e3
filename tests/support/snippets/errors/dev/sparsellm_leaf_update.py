# source: https://github.com/BaiTheBest/SparseLLM/issues/13
# kind: leaf-inplace
# edits: the four lines in a loop over two chunks, on tiny tensors
import torch

torch.manual_seed(0)
s = torch.zeros(4, 6, dtype=torch.float16)
target = torch.randn(4, 3)
s_learning_rate = 0.1
for chunk in (slice(0, 3), slice(3, 6)):
    s_batch = torch.randn(4, 3, requires_grad=True)
    loss_s = ((s_batch - target) ** 2).sum()
    loss_s.backward()
    s_batch -= s_learning_rate * s_batch.grad
    s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach().to(dtype=torch.float16)
