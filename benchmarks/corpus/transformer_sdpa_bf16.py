"""bf16 attention: fp32 q/k/v cast to bfloat16 inside forward, F.scaled_dot_product_attention causal in bf16, result cast back to fp32; batch 2, 8 heads, seq 256, head_dim 64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
n_heads = 8
seq_len = 256
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v):
        q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).float()


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
