"""Single op: F.scaled_dot_product_attention without mask on (batch, heads, seq, head_dim); batch 8, 12 heads, seq 512, head_dim 64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
n_heads = 12
seq_len = 512
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
