"""Rotary position embedding (RoPE, GPT-NeoX half-rotation) applied to q and k from a cached cos/sin table at given position ids; batch 4, 32 heads, seq 1024, head_dim 128."""
import torch
import torch.nn as nn

batch_size = 4
n_heads = 32
seq_len = 1024
head_dim = 128
max_positions = 4096
base = 10000.0


class Model(nn.Module):
    def __init__(self, head_dim, max_positions, base):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        t = torch.arange(max_positions, dtype=torch.float32)
        freqs = torch.einsum("i,j->ij", t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    @staticmethod
    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    def forward(self, q, k, position_ids):
        cos = self.cos_cached[position_ids].unsqueeze(1)  # (b, 1, s, d)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        q_rot = q * cos + self.rotate_half(q) * sin
        k_rot = k * cos + self.rotate_half(k) * sin
        return q_rot, k_rot


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    offsets = torch.randint(0, max_positions - seq_len, (batch_size, 1))
    position_ids = offsets + torch.arange(seq_len)[None, :]
    return [torch.randn(shape), torch.randn(shape), position_ids]


def get_init_inputs():
    return [head_dim, max_positions, base]
