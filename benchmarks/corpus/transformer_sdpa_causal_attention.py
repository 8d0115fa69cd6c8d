"""Causal self-attention with F.scaled_dot_product_attention(is_causal=True): q/k/v linears, head split, output projection; batch 4, seq 1024, d 768, 12 heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 1024
d_model = 768
n_heads = 12


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def _heads(self, t):
        b, s, d = t.shape
        return t.view(b, s, self.n_heads, d // self.n_heads).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
