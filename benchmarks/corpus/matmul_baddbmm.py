"""torch.baddbmm computing alpha * Q @ K^T + beta * bias (the BLOOM ALiBi score kernel: beta 1, alpha 1/sqrt(d)) followed by softmax; 64 batch*heads, 512 x 512, head_dim 64."""
import math

import torch
import torch.nn as nn

batch_heads = 64
seq_len = 512
head_dim = 64


class Model(nn.Module):
    def forward(self, bias, q, k):
        scores = torch.baddbmm(bias, q, k.transpose(1, 2), beta=1.0, alpha=1.0 / math.sqrt(q.shape[-1]))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    bias = -0.05 * torch.arange(seq_len).float().expand(batch_heads, 1, seq_len).contiguous()
    return [bias, torch.randn(batch_heads, seq_len, head_dim), torch.randn(batch_heads, seq_len, head_dim)]


def get_init_inputs():
    return []
