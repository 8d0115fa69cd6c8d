"""Attention with einsum contractions 'bhqd,bhkd->bhqk' and 'bhqk,bhkd->bhqd' plus an einsum head-merge projection 'bhqd,hdm->bqm'; batch 4, 8 heads, seq 512, head_dim 64, d 512."""
import math

import torch
import torch.nn as nn

batch_size = 4
n_heads = 8
seq_len = 512
head_dim = 64


class Model(nn.Module):
    def __init__(self, n_heads, head_dim):
        super().__init__()
        self.w_o = nn.Parameter(torch.randn(n_heads, head_dim, n_heads * head_dim) / math.sqrt(n_heads * head_dim))

    def forward(self, q, k, v):
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
        probs = scores.softmax(dim=-1)
        ctx = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        return torch.einsum("bhqd,hdm->bqm", ctx, self.w_o)


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [n_heads, head_dim]
