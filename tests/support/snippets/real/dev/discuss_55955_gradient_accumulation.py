# source: https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955
# edits: a small model, loss_function, optimizer, accumulation_steps and a training_set of four random batches added before the posted loop
# gathered: 2026-12-07b
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accumulation_steps = 2
training_set = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(4)]

model.zero_grad() # Reset gradients tensors
for i, (inputs, labels) in enumerate(training_set):
    predictions = model(inputs) # Forward pass
    loss = loss_function(predictions, labels) # Compute loss function
    loss = loss / accumulation_steps # Normalize our loss (if averaged)
    loss.backward() # Backward pass
    if (i+1) % accumulation_steps == 0: # Wait for several backward steps
        optimizer.step() # Now we can do an optimizer step
        model.zero_grad() # Reset gradients tensors
