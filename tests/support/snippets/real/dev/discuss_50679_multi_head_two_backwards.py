# source: https://discuss.pytorch.org/t/training-a-network-with-multiple-heads/50679
# edits: a small two-headed model, loss_fn, optimizer, input and labels added; the question's two listings, one after the other
# gathered: 2026-12-07b
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head1 = nn.Linear(8, 3)
        self.head2 = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head1(h), self.head2(h)


model = TwoHeads()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
input = torch.randn(5, 4)
labels = torch.randint(0, 3, (5,))

o1, o2 = model(input) #outputs

l1 = loss_fn(o1, labels)
l1.backward(retain_graph=True)
l2 = loss_fn(o2, labels)
l2.backward(retain_graph=True)

optimizer.step()

o1, o2 = model(input) #outputs

l1 = loss_fn(o1, labels)
l2 = loss_fn(o2, labels)

torch.autograd.backward([l1, l2])

optimizer.step()
