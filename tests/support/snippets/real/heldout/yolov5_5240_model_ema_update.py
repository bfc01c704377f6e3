# source: https://github.com/ultralytics/yolov5/issues/5240
# edits: the posted update() inside a ModelEMA with the repository's constructor shape (deepcopy, updates, a decay ramp) and is_parallel; a tiny model trained one step, then the EMA updated
import copy
import math
import torch
import torch.nn as nn

def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)

class ModelEMA:
    def __init__(self, model, decay=0.9999, updates=0):
        self.ema = copy.deepcopy(model).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / 2000))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        # Update EMA parameters
        with torch.no_grad():
            self.updates += 1
            d = self.decay(self.updates)
            msd = model.module.state_dict() if is_parallel(model) else model.state_dict()  # model state_dict
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v *= d
                    v += (1. - d) * msd[k].detach()

model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
ema = ModelEMA(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(5, 3)).pow(2).mean().backward()
optimizer.step()
ema.update(model)
print(ema.ema[0].weight)
