"""T5 relative position bias: bidirectional log-spaced bucketing of (key - query) offsets (integer math + log), embedding lookup per head, added to attention scores, softmax; batch 4, 12 heads, seq 512, head_dim 64."""
import math

import torch
import torch.nn as nn

batch_size = 4
n_heads = 12
seq_len = 512
head_dim = 64
num_buckets = 32
max_distance = 128


class Model(nn.Module):
    def __init__(self, n_heads, num_buckets, max_distance):
        super().__init__()
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.rel_bias = nn.Embedding(num_buckets, n_heads)

    def bucket(self, rel):
        nb = self.num_buckets // 2
        ret = (rel > 0).long() * nb
        n = rel.abs()
        max_exact = nb // 2
        is_small = n < max_exact
        large = max_exact + (
            torch.log(n.float() / max_exact) / math.log(self.max_distance / max_exact) * (nb - max_exact)
        ).long()
        large = torch.clamp(large, max=nb - 1)
        return ret + torch.where(is_small, n, large)

    def forward(self, q, k, v):
        s = q.shape[-2]
        pos = torch.arange(s, device=q.device)
        rel = pos[None, :] - pos[:, None]
        bias = self.rel_bias(self.bucket(rel)).permute(2, 0, 1).unsqueeze(0)  # (1, h, s, s)
        scores = q @ k.transpose(-2, -1) + bias  # T5 does not scale by 1/sqrt(d)
        return torch.softmax(scores.float(), dim=-1).type_as(q) @ v


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape) * 0.125, torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [n_heads, num_buckets, max_distance]
