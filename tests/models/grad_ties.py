"""ReLU over activations that are exactly 0 (ties at the kink): a rewrite to clamp(min=0) changes the gradient there (0 vs 1) and nothing else."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 16))

    def forward(self, x):
        return torch.relu(x) * self.scale + 1.0


def get_inputs():
    x = torch.randn(8, 16)
    x[:, ::3] = 0.0  # exact zeros: relu's kink
    return [x]
