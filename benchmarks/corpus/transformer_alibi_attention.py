"""ALiBi causal attention (BLOOM/MPT style): per-head geometric slopes times relative distance added to the scores, causal -inf mask, softmax, @ V; batch 2, 16 heads, seq 1024, head_dim 64."""
import math

import torch
import torch.nn as nn

batch_size = 2
n_heads = 16
seq_len = 1024
head_dim = 64


def alibi_slopes(n):
    start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
    return torch.tensor([start * start ** i for i in range(n)], dtype=torch.float32)


class Model(nn.Module):
    def __init__(self, n_heads):
        super().__init__()
        self.register_buffer("slopes", alibi_slopes(n_heads).view(1, n_heads, 1, 1))

    def forward(self, q, k, v):
        s = q.shape[-2]
        pos = torch.arange(s, device=q.device)
        rel = (pos[None, :] - pos[:, None]).to(q.dtype)  # key - query, <= 0 on the allowed side
        bias = self.slopes * rel[None, None]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias
        causal = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [n_heads]
