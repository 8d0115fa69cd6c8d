"""Multi-head self-attention written by hand: fused QKV linear, split heads, Q K^T / sqrt(d), softmax, @ V, output projection; batch 4, seq 512, d 768, 12 heads."""
import math

import torch
import torch.nn as nn

batch_size = 4
seq_len = 512
d_model = 768
n_heads = 12


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.softmax(scores, dim=-1)
        y = torch.matmul(attn, v)
        y = y.transpose(1, 2).reshape(b, s, d)
        return self.out(y)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
