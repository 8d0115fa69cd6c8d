"""Single op: exact (erf) F.gelu on an MLP hidden activation; batch 4, seq 512, hidden 3072."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 512
hidden = 3072


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 2.0]


def get_init_inputs():
    return []
