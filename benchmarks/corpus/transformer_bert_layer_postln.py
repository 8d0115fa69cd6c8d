"""BERT-base encoder layer (post-LN): self-attention written with einsum + softmax, add & LayerNorm, GELU MLP 3072, add & LayerNorm; batch 8, seq 384, d 768."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 384
d_model = 768
n_heads = 12
ffn_dim = 3072


class Model(nn.Module):
    def __init__(self, d_model, n_heads, ffn_dim):
        super().__init__()
        self.n_heads = n_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.attn_out = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model, eps=1e-12)
        self.intermediate = nn.Linear(d_model, ffn_dim)
        self.output = nn.Linear(ffn_dim, d_model)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, x):
        b, s, d = x.shape
        h = self.n_heads
        q = self.query(x).view(b, s, h, d // h)
        k = self.key(x).view(b, s, h, d // h)
        v = self.value(x).view(b, s, h, d // h)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d // h)
        probs = scores.softmax(dim=-1)
        ctx = torch.einsum("bhqk,bkhd->bqhd", probs, v).reshape(b, s, d)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.output(F.gelu(self.intermediate(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads, ffn_dim]
