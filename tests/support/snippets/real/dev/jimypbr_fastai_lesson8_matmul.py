# source: https://jimypbr.github.io/2020/02/fast-ai-lesson-8-notes-backprop-from-the-foundations
# edits: two small random matrices (5x8 and 8x4) instead of MNIST weights; the three versions called and compared
# gathered: 2026-12-07
import torch

def matmul(a,b):
    ar,ac = a.shape # n_rows * n_cols
    br,bc = b.shape
    assert ac==br
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc):
            for k in range(ac): # or br
                c[i,j] += a[i,k] * b[k,j]
    return c

def matmul_elementwise(a,b):
    ar,ac = a.shape
    br,bc = b.shape
    assert ac==br
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc):
            # Any trailing ",:" can be removed
            c[i,j] = (a[i,:] * b[:,j]).sum()
    return c

def matmul_broadcast(a,b):
    ar,ac = a.shape
    br,bc = b.shape
    assert ac==br
    c = torch.zeros(ar, bc)
    for i in range(ar):
        c[i]   = (a[i  ].unsqueeze(-1) * b).sum(dim=0)
    return c

m1 = torch.randn(5, 8)
m2 = torch.randn(8, 4)
t1 = matmul(m1, m2)
t2 = matmul_elementwise(m1, m2)
t3 = matmul_broadcast(m1, m2)
print(torch.allclose(t1, m1 @ m2, atol=1e-5), torch.allclose(t2, t3, atol=1e-5))
