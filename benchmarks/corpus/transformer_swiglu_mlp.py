"""LLaMA SwiGLU feed-forward: down(silu(gate(x)) * up(x)), no biases; batch 2, seq 512, d 2048, hidden 5632."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 512
d_model = 2048
ffn_dim = 5632


class Model(nn.Module):
    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.gate = nn.Linear(d_model, ffn_dim, bias=False)
        self.up = nn.Linear(d_model, ffn_dim, bias=False)
        self.down = nn.Linear(ffn_dim, d_model, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, ffn_dim]
