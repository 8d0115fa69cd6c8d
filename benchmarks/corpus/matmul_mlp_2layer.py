"""Two-layer MLP (transformer FFN): Linear 1024 -> 4096, GELU, Linear 4096 -> 1024; 4096 tokens."""
import torch
import torch.nn as nn

num_tokens = 4096
d_model = 1024
hidden = 4096


class Model(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(num_tokens, d_model)]


def get_init_inputs():
    return [d_model, hidden]
