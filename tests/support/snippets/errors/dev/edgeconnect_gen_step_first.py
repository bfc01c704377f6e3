# source: https://github.com/knazeri/edge-connect/issues/188
# kind: version-counter
# edits: the model's backward(gen_loss, dis_loss) on tiny nets; the generator's step taken
#   before the discriminator's backward, as in the failing version
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
discriminator = nn.Linear(4, 1)
gen_optimizer = torch.optim.Adam(generator.parameters())
dis_optimizer = torch.optim.Adam(discriminator.parameters())

images = torch.randn(2, 4)
outputs = generator(images)
dis_loss = discriminator(outputs).mean() - discriminator(images).mean()
gen_loss = -discriminator(outputs).mean() + (outputs - images).abs().mean()
gen_optimizer.zero_grad()
dis_optimizer.zero_grad()
gen_loss.backward(retain_graph=True)
gen_optimizer.step()
dis_loss.backward()
dis_optimizer.step()
