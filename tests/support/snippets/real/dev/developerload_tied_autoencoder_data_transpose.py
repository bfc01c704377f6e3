# source: https://www.developerload.com/how-to-share-weights-between-modules-in-pytorch
# edits: the question's TiedAutoEncoderOffTheShelf used on a small weight and input, with a reconstruction loss and backward added
# gathered: 2026-12-07b
import torch
import torch.nn as nn

# tied autoencoder using off the shelf nn modules
class TiedAutoEncoderOffTheShelf(nn.Module):
    def __init__(self, inp, out, weight):
        super().__init__()
        self.encoder = nn.Linear(inp, out, bias=False)
        self.decoder = nn.Linear(out, inp, bias=False)

        # tie the weights
        self.encoder.weight.data = weight.clone()
        self.decoder.weight.data = self.encoder.weight.data.transpose(0,1)

    def forward(self, input):
        encoded_feats = self.encoder(input)
        reconstructed_output = self.decoder(encoded_feats)
        return encoded_feats, reconstructed_output

weight = torch.randn(3, 5)
model = TiedAutoEncoderOffTheShelf(5, 3, weight)
input = torch.randn(4, 5)
encoded_feats, reconstructed_output = model(input)
loss = ((reconstructed_output - input) ** 2).mean()
loss.backward()
