"""torch.tensordot contracting two dims (tensor-network / Tucker core step) and torch.kron of small factor matrices (Kronecker-factored layer); 64 x 32 x 32 x 128 with 32 x 32 x 256; 4096 vectors through a 32x32 (x) 64x64 Kronecker product."""
import torch
import torch.nn as nn

batch_size = 64
d1 = 32
d2 = 32
features = 128
out_features = 256
kron_a = 32
kron_b = 64
num_vectors = 4096


class Model(nn.Module):
    def __init__(self, d1, d2, out_features, kron_a, kron_b):
        super().__init__()
        self.core = nn.Parameter(torch.randn(d1, d2, out_features) / (d1 * d2) ** 0.5)
        self.a = nn.Parameter(torch.randn(kron_a, kron_a) / kron_a ** 0.5)
        self.b = nn.Parameter(torch.randn(kron_b, kron_b) / kron_b ** 0.5)

    def forward(self, x, v):
        y = torch.tensordot(x, self.core, dims=([1, 2], [0, 1]))  # (batch, features, out)
        w = torch.kron(self.a, self.b)  # (a*b, a*b)
        return y, v @ w.t()


def get_inputs():
    return [torch.randn(batch_size, d1, d2, features), torch.randn(num_vectors, kron_a * kron_b)]


def get_init_inputs():
    return [d1, d2, out_features, kron_a, kron_b]
