# Knowledge distillation: KLDivLoss between softened teacher and student outputs
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Linear(10, 5)
student = nn.Linear(10, 5)
x = torch.randn(16, 10)
labels = torch.randint(0, 5, (16,))
T = 2.0
with torch.no_grad():
    soft_targets = F.softmax(teacher(x) / T, dim=1)
student_logits = student(x)
kl_loss = nn.KLDivLoss(reduction="batchmean")
kl = kl_loss(F.log_softmax(student_logits / T, dim=1), soft_targets)
ce = F.cross_entropy(student_logits, labels)
loss = 0.7 * kl * T * T + 0.3 * ce
loss.backward()
print(kl.item(), ce.item())
print(student.weight.grad.norm())
