# source: https://discuss.pytorch.org/t/how-gradients-are-accumulated-in-real/115462
# edits: a small model, loss_function, optimizer, accumulation_steps and a training_set of five random batches added before the posted loop
# gathered: 2026-12-07b
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
loss_function = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
accumulation_steps = 2
training_set = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(5)]

for i, (inputs, labels) in enumerate(training_set):
    predictions = model(inputs)                     # Forward pass
    loss = loss_function(predictions, labels)       # Compute loss function
    loss = loss / accumulation_steps                # Normalize our loss (if averaged)
    loss.backward()                                 # Backward pass
    if (i+1) % accumulation_steps == 0:             # Wait for several backward steps
        optimizer.step()                            # Now we can do an optimizer step
