"""A layer norm followed by a residual (module instance style)."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(6)

    def forward(self, x):
        return self.norm(x) + x * 1.0


model = Block()
example_inputs = (torch.randn(2, 6),)
