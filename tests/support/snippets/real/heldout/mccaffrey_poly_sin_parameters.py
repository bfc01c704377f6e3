# source: https://jamesmccaffreyblog.com/2022/04/18/estimating-sinx-using-pytorch/
# edits: math.pi for np.pi and no numpy seed (no numpy); 200 iterations of 20 points instead of 100_000 of 100; the loop's body completed from the post's description
# gathered: 2026-12-07
import math
import torch as T
device = T.device('cpu')
class Poly(T.nn.Module):
    # f(x) = ax^3 + bx^2 + cx + d
    def __init__(self):
        super(Poly, self).__init__() # pre Python 3.3
        self.a = T.nn.Parameter( T.randn((1)).to(device) )
        self.b = T.nn.Parameter( T.randn((1)).to(device) )
        self.c = T.nn.Parameter( T.randn((1)).to(device) )
        self.d = T.nn.Parameter( T.randn((1)).to(device) )
    def forward(self, x):
        y = (self.a * x**3) + (self.b * x**2) + \
            (self.c * x) + self.d
        return y
def main():
    # 0. set up
    print("\nEstimate sin(x) using ax^3 + bx^2 + cx + d ")
    T.manual_seed(1)
    # 1. create model
    print("\nCreating polynomial model ")
    poly = Poly().to(device)
    # 2. train model
    print("\nTraining ")
    lo = -math.pi; hi = math.pi # range of input vals
    loss_func = T.nn.MSELoss()
    optimizer = T.optim.SGD(poly.parameters(), lr=1.0e-4)
    acc_loss = 0.0
    for i in range(200):
        x = (hi - lo) * T.rand((20)).to(device) + lo
        y = T.sin(x)
        optimizer.zero_grad()
        oupt = poly(x)
        loss_val = loss_func(oupt, y)
        acc_loss += loss_val.item()
        loss_val.backward()
        optimizer.step()
    print(acc_loss)
    return poly
poly = main()
