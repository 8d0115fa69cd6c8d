"""Single op: tanh-approximate F.gelu (GPT-2 'gelu_new'); batch 8, seq 1024, hidden 3072."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 1024
hidden = 3072


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 2.0]


def get_init_inputs():
    return []
