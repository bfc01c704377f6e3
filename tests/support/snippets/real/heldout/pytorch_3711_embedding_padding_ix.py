# source: https://github.com/pytorch/pytorch/issues/3711
# edits: the two posted lines at module level (self. dropped, the import added), as the issue writes them
# gathered: 2026-12-07b
import torch
import torch.nn as nn
from torch.autograd import Variable

embedding = nn.Embedding(5, 20, padding_ix=0, sparse=True)
e0 = embedding(Variable(torch.LongTensor([0])))
