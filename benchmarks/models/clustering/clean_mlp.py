"""A clean MLP block (Linear, GELU, LayerNorm, residual): no known root cause."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 32)
        self.ln = nn.LayerNorm(32)

    def forward(self, x):
        return self.ln(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def get_inputs():
    return [torch.randn(8, 32)]
