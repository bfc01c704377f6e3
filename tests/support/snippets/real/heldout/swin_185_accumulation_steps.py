# source: https://github.com/microsoft/Swin-Transformer/issues/185
# edits: a tiny model, config, data, criterion and a stand-in for timm's scheduler (step_update sets the lr) around the posted lines, which are as written inside the training loop
import torch
import torch.nn as nn

class config:
    class TRAIN:
        ACCUMULATION_STEPS = 2

class LinearWarmup:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step_update(self, num_updates):
        for group in self.optimizer.param_groups:
            group["lr"] = 0.1 * min(1.0, (num_updates + 1) / 4)

model = nn.Linear(3, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lr_scheduler = LinearWarmup(optimizer)
data_loader = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(4)]
num_steps = len(data_loader)
epoch = 0

optimizer.zero_grad()
for idx, (samples, targets) in enumerate(data_loader):
    outputs = model(samples)
    loss = criterion(outputs, targets)
    loss = loss / config.TRAIN.ACCUMULATION_STEPS
    loss.backward()
    if (idx + 1) % config.TRAIN.ACCUMULATION_STEPS == 0:
        optimizer.step()
        optimizer.zero_grad()
        lr_scheduler.step_update(epoch * num_steps + idx)
