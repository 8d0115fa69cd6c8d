"""Single op: F.silu (swish) on a SwiGLU gate activation; batch 2, seq 2048, hidden 5632."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 2048
hidden = 5632


class Model(nn.Module):
    def forward(self, x):
        return F.silu(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 3.0]


def get_init_inputs():
    return []
