# Cosine learning-rate warm-up computed with math, applied by hand
import math
import torch

torch.manual_seed(3)
w = torch.randn(5, requires_grad=True)
target = torch.linspace(-1, 1, 5)
base_lr = 0.3
warmup = 2
total = 8
for step in range(total):
    if step < warmup:
        lr = base_lr * (step + 1) / warmup
    else:
        progress = (step - warmup) / (total - warmup)
        lr = 0.5 * base_lr * (1 + math.cos(math.pi * progress))
    loss = torch.sum((w - target) ** 2) / math.sqrt(len(w))
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()
    print(f"step {step} lr {lr:.4f} loss {loss.item():.5f}")
print(round(math.log(loss.item()), 3))
