# source: https://github.com/huawei-noah/AdderNet/issues/21
# kind: wrong-grad-count
# edits: adder.py's Function reduced to tiny matrices; the backward computes both gradients
#   and, as in the issue, returns nothing
import torch


class Adder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, W_col, X_col):
        ctx.save_for_backward(W_col, X_col)
        return -(W_col.unsqueeze(2) - X_col.unsqueeze(0)).abs().sum(1)

    @staticmethod
    def backward(ctx, grad_output):
        W_col, X_col = ctx.saved_tensors
        grad_W_col = ((X_col.unsqueeze(0) - W_col.unsqueeze(2)) * grad_output.unsqueeze(1)).sum(2)
        grad_X_col = (-(X_col.unsqueeze(0) - W_col.unsqueeze(2)).clamp(-1, 1) * grad_output.unsqueeze(1)).sum(0)


torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
X = torch.randn(4, 5, requires_grad=True)
loss = Adder.apply(W, X).sum()
loss.backward()
