# source: https://github.com/ngxbac/GAIN/issues/2
# edits: logits and labels_ohe defined before the posted lines (10x2, as in the error)
import torch

logits = torch.randn(10, 2, requires_grad=True)
labels_ohe = torch.nn.functional.one_hot(torch.randint(0, 2, (10,)), 2).float()

gradient = logits * labels_ohe
grad_logits = (logits * labels_ohe).sum()
grad_logits.backward(gradient=gradient, retain_graph=True)
