# source: https://mlkatas.com/kata/23
# edits: the import added; indentation the page lost restored
# gathered: 2026-12-07b
import torch
w = torch.tensor(5.0, requires_grad=True)
loss = (w - 3) ** 2
loss.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
print(w.item()) # Should be closer to 3 than 5
