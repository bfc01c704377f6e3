# A small CNN: Conv2d, BatchNorm2d, MaxPool2d, Dropout2d, Flatten, trained with Adagrad
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 4, kernel_size=3, padding=1),
    nn.BatchNorm2d(4),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Dropout2d(0.25),
    nn.Conv2d(4, 8, 3),
    nn.ELU(),
    nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten(),
    nn.Linear(8, 3),
)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)

images = torch.randn(6, 1, 8, 8)
labels = torch.tensor([0, 1, 2, 1, 0, 2])
for it in range(3):
    optimizer.zero_grad()
    logits = model(images)
    loss = criterion(logits, labels)
    loss.backward()
    optimizer.step()
    print(it, logits.shape, loss.item())
