"""Sliding-window causal attention (Mistral/Longformer local style): boolean band mask built from arange, F.scaled_dot_product_attention with attn_mask; batch 2, 16 heads, seq 2048, window 256, head_dim 64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
n_heads = 16
seq_len = 2048
head_dim = 64
window = 256


class Model(nn.Module):
    def __init__(self, window):
        super().__init__()
        self.window = window

    def forward(self, q, k, v):
        s = q.shape[-2]
        i = torch.arange(s, device=q.device)[:, None]
        j = torch.arange(s, device=q.device)[None, :]
        allowed = (j <= i) & (j > i - self.window)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [window]
