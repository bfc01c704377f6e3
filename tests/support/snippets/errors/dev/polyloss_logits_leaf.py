# source: https://github.com/abhuse/polyloss-pytorch/issues/4
# kind: no-grad-fn
# edits: the README's Poly1 cross-entropy example written out inline
import torch
import torch.nn.functional as F

batch_size, num_classes = 4, 3
logits = torch.rand([batch_size, num_classes])
labels = torch.randint(0, num_classes, [batch_size])
ce = F.cross_entropy(logits, labels, reduction="none")
pt = torch.sum(F.one_hot(labels, num_classes) * F.softmax(logits, dim=-1), dim=-1)
loss = (ce + 1.0 * (1 - pt)).mean()
loss.backward()
