# source: https://prodopsy.com/how-can-the-backward-function-in-tensor-influence-the-matrix-in-model
# edits: the garbled type hint in the signature repaired (num_classes: int); a cross-entropy step on random data added
# gathered: 2026-12-07
import torch
class SoftmaxRegression(torch.nn.Module):
    def __init__(self, num_features: int, num_classes: int):
        super().__init__()
        self.linear = torch.nn.Linear(num_features, num_classes)
        # PROPER INITIALIZATION - maintain graph connection
        with torch.no_grad():
            self.linear.weight.zero_()
            self.linear.bias.zero_()
    def forward(self, x):
        logits = self.linear(x)
        probas = torch.nn.functional.softmax(logits, dim=1)
        return logits, probas
model = SoftmaxRegression(num_features=4, num_classes=3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
features = torch.randn(6, 4)
targets = torch.tensor([0, 1, 2, 0, 1, 2])
for epoch in range(3):
    logits, probas = model(features)
    cost = torch.nn.functional.cross_entropy(logits, targets)
    optimizer.zero_grad()
    cost.backward()
    optimizer.step()
