# source: https://www.codegenes.net/blog/pytorch-custom-loss-gradient
# edits: the page's two consecutive code blocks joined (the loss, then its backward)
import torch
def custom_loss(predictions, labels):
    # Example: Mean Squared Error - like custom loss
    diff = predictions - labels
    loss = torch.mean(diff ** 2)
    return loss
# Example usage
predictions = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
labels = torch.tensor([1.1, 2.1, 3.1])
loss = custom_loss(predictions, labels)
print(loss)
loss.backward()
print(predictions.grad)
