"""RMSNorm written by hand (LLaMA): x * rsqrt(mean(x^2) + eps) * weight, computed in fp32; batch 4, seq 2048, hidden 4096."""
import torch
import torch.nn as nn

batch_size = 4
seq_len = 2048
hidden = 4096
eps = 1e-6


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden) + 0.05 * torch.randn(hidden))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, eps]
