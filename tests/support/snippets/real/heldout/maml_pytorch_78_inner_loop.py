# source: https://github.com/dragen1860/MAML-Pytorch/issues/78
# edits: a two-layer Learner with the repository's forward(x, vars, bn_training) signature, the task batch and the hyperparameters stand in for the Meta class's; the posted loop body as written (self. dropped), then the query loss on fast_weights and the meta step
import torch
import torch.nn as nn
import torch.nn.functional as F

class Learner(nn.Module):
    def __init__(self):
        super(Learner, self).__init__()
        self.vars = nn.ParameterList([nn.Parameter(torch.randn(8, 4) * 0.1), nn.Parameter(torch.zeros(8)),
                                      nn.Parameter(torch.randn(5, 8) * 0.1), nn.Parameter(torch.zeros(5))])

    def forward(self, x, vars=None, bn_training=True):
        if vars is None:
            vars = self.vars
        vars = list(vars)
        x = F.relu(F.linear(x, vars[0], vars[1]))
        return F.linear(x, vars[2], vars[3])

    def parameters(self):
        return self.vars

net = Learner()
meta_optim = torch.optim.Adam(net.parameters(), lr=1e-3)
update_lr = 0.4
task_num = 2
x_spt, y_spt = torch.randn(task_num, 5, 4), torch.randint(0, 5, (task_num, 5))
x_qry, y_qry = torch.randn(task_num, 5, 4), torch.randint(0, 5, (task_num, 5))
losses_q = [0, 0]
corrects = [0, 0]

for i in range(task_num):

            # 1. run the i-th task and compute loss for k=0
            logits = net(x_spt[i], vars=None, bn_training=True)
            loss = F.cross_entropy(logits, y_spt[i])
            grad = torch.autograd.grad(loss, net.parameters())
            fast_weights = list(map(lambda p: p[1] - update_lr * p[0], zip(grad, net.parameters())))

            # this is the loss and accuracy before first update
            with torch.no_grad():
                # [setsz, nway]
                logits_q = net(x_qry[i], net.parameters(), bn_training=True)
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[0] += loss_q

                pred_q = F.softmax(logits_q, dim=1).argmax(dim=1)
                correct = torch.eq(pred_q, y_qry[i]).sum().item()
                corrects[0] = corrects[0] + correct

            logits_q = net(x_qry[i], fast_weights, bn_training=True)
            losses_q[1] += F.cross_entropy(logits_q, y_qry[i])

loss_q = losses_q[-1] / task_num
meta_optim.zero_grad()
loss_q.backward()
meta_optim.step()
print(loss_q.item())
