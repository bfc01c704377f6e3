# source: https://github.com/facebookresearch/fairseq/issues/4702
# edits: a tiny model with fc1/fc2 layers and one Adam step stand in for the fairseq transformer and its trainer
import torch
import torch.nn as nn

def freeze_param_grad_zero(model):
    
    for name, param in model.named_parameters():
        if "fc1" in name or "fc2" in name:
            print("========= start freezing =========")
            param.requires_grad = False
    
    return model

class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Linear(4, 4)
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(self.attn(x))))

model = freeze_param_grad_zero(Layer())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
before = model.fc1.weight.clone()
model(torch.randn(2, 4)).pow(2).mean().backward()
optimizer.step()
print(torch.equal(before, model.fc1.weight))
