"""torch.matmul with broadcasting batch dims: (B,1,M,K) @ (1,H,K,N) per-head projections, (B,H,M,N) @ (N,) matrix-vector, and a 1-D @ 3-D product; B 8, H 16, M 256, K 512, N 64."""
import torch
import torch.nn as nn

batch_size = 8
n_heads = 16
rows = 256
inner = 512
cols = 64


class Model(nn.Module):
    def __init__(self, n_heads, inner, cols):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1, n_heads, inner, cols) / inner ** 0.5)
        self.v = nn.Parameter(torch.randn(cols) / cols ** 0.5)
        self.u = nn.Parameter(torch.randn(inner) / inner ** 0.5)

    def forward(self, x):
        y = torch.matmul(x.unsqueeze(1), self.w)  # (B, H, M, N)
        scores = torch.matmul(y, self.v)  # (B, H, M)
        pooled = torch.matmul(self.u, x.transpose(1, 2))  # (B, M)
        return y, scores, pooled


def get_inputs():
    return [torch.randn(batch_size, rows, inner)]


def get_init_inputs():
    return [n_heads, inner, cols]
