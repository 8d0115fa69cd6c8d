"""Single op: torch.softmax over the last dim of attention scores; batch 4, 12 heads, 512x512."""
import torch
import torch.nn as nn

batch_size = 4
n_heads = 12
seq_len = 512


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, n_heads, seq_len, seq_len) * 4.0]


def get_init_inputs():
    return []
