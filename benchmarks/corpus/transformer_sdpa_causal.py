"""Single op: F.scaled_dot_product_attention with is_causal=True; batch 4, 16 heads, seq 1024, head_dim 64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
n_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
