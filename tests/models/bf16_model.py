"""A bfloat16 model: matmul, tanh, mean and an exp in bfloat16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(32, 32, dtype=torch.bfloat16) * 0.2)

    def forward(self, x):
        h = torch.tanh(x @ self.w) + x * 0.5
        return h.mean(dim=0), torch.exp(h * 0.3).sum(dim=1), h


def get_inputs():
    return [torch.randn(16, 32, dtype=torch.bfloat16)]
