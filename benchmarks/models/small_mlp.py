"""Small benchmark model (the MLP example): linear layers, activations, a residual and a layer norm (~8 ops)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d_in=16, d_hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_in)
        self.norm = nn.LayerNorm(d_in)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = torch.sigmoid(h) * h
        y = self.fc2(h) + x
        return self.norm(y).tanh()


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return [16, 32]
