# source: http://121.4.212.150/deeplearning/p10462014
# edits: a tiny linear model and config stand in for the translation model; train() runs three steps on random data
# gathered: 2026-12-07
import torch

class CustomSchedule(object):
    def __init__(self, d_model, warmup_steps=4000, optimizer=None):
        super(CustomSchedule, self).__init__()
        self.d_model = torch.tensor(d_model, dtype=torch.float32)
        self.warmup_steps = warmup_steps
        self.steps = 1.
        self.optimizer = optimizer

    def step(self):
        arg1 = self.steps ** -0.5
        arg2 = self.steps * (self.warmup_steps ** -1.5)
        self.steps += 1.
        lr = (self.d_model ** -0.5) * min(arg1, arg2)
        for p in self.optimizer.param_groups:
            p['lr'] = lr
        return lr

class Config:
    beta1 = 0.9
    beta2 = 0.98
    epsilon = 1e-9
    d_model = 8

translation_model = torch.nn.Linear(8, 8)

def train(config):
    optimizer = torch.optim.Adam(translation_model.parameters(),
                                 lr=0.,
                                 betas=(config.beta1, config.beta2), eps=config.epsilon)
    lr_scheduler = CustomSchedule(config.d_model, optimizer=optimizer)
    for _ in range(3):
        loss = translation_model(torch.randn(2, 8)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        lr_scheduler.step()
        optimizer.step()

train(Config())
