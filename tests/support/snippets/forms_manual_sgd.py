# Linear regression by hand: a train function, manual SGD steps under no_grad
import torch

torch.manual_seed(0)
true_w = torch.tensor([2.0, -3.4])
true_b = 4.2
features = torch.randn(32, 2)
labels = features @ true_w + true_b + 0.01 * torch.randn(32)

w = torch.zeros(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    return X @ w + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    for i in range(0, num_examples, batch_size):
        yield features[i : i + batch_size], labels[i : i + batch_size]


lr = 0.03
num_epochs = 3
batch_size = 8
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = squared_loss(linreg(X, w, b), y)
        l.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = squared_loss(linreg(features, w, b), labels)
        print(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}")
