# source: https://github.com/NVlabs/curobo/issues/382
# kind: wrong-grad-count
# edits: TransformPose with two of its output buffers passed in, as the issue describes; the
#   backward returns gradients for the pose only
import torch


class TransformPose(torch.autograd.Function):
    @staticmethod
    def forward(ctx, position, quaternion, out_position, out_quaternion):
        out_position.copy_(position * 2)
        out_quaternion.copy_(quaternion)
        return out_position.clone(), out_quaternion.clone()

    @staticmethod
    def backward(ctx, grad_position, grad_quaternion):
        return grad_position * 2, grad_quaternion


position = torch.randn(3, requires_grad=True)
quaternion = torch.randn(4, requires_grad=True)
p, q = TransformPose.apply(position, quaternion, torch.empty(3), torch.empty(4))
(p.sum() + q.sum()).backward()
