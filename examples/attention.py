"""A single-head attention block (`model` + `example_inputs`): projections, softmax, matmuls."""
import math

import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.scale = 1.0 / math.sqrt(d)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        attn = scores.softmax(dim=-1)
        out = attn @ v
        return out + x, attn.argmax(dim=-1)


model = Attention()
example_inputs = (torch.randn(2, 6, 16),)
