# source: https://github.com/1zb/pytorch-image-comp-rnn/issues/4
# kind: wrong-grad-count
# edits: functions/sign.py's Sign as a static-method Function, used on a tiny encoder output
import torch
import torch.nn as nn


class Sign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, is_training=True):
        if is_training:
            prob = input.new(input.size()).uniform_()
            x = input.clone()
            x[(1 - input) / 2 <= prob] = 1
            x[(1 - input) / 2 > prob] = -1
            return x
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
codes = Sign.apply(encoder(torch.randn(2, 4)), True)
loss = codes.pow(2).sum()
loss.backward()
