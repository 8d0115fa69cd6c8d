"""Decode step with a KV cache: project one new token, concat new k/v onto the cached past (torch.cat on seq dim), attend 1 query over past+1 keys, return output and the grown cache; batch 4, 16 heads, past 2047, head_dim 128."""
import math

import torch
import torch.nn as nn

batch_size = 4
n_heads = 16
head_dim = 128
past_len = 2047
d_model = n_heads * head_dim


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, past_k, past_v):
        b = x.shape[0]
        q, k, v = self.qkv(x).view(b, 1, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, 1, -1)), k, v


def get_inputs():
    cache = (batch_size, n_heads, past_len, head_dim)
    return [torch.randn(batch_size, 1, d_model), torch.randn(cache), torch.randn(cache)]


def get_init_inputs():
    return [d_model, n_heads]
