"""Single op: torch.bmm of attention probabilities (batch*heads, q, k) with values (batch*heads, k, head_dim); 96 x 512 x 512 @ 96 x 512 x 64."""
import torch
import torch.nn as nn

batch_heads = 96
seq_len = 512
head_dim = 64


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.softmax(torch.randn(batch_heads, seq_len, seq_len), dim=-1), torch.randn(batch_heads, seq_len, head_dim)]


def get_init_inputs():
    return []
