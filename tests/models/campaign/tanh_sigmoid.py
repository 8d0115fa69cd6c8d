"""Tanh and sigmoid mixed (minifier style)."""
import torch


class Repro(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x) + torch.sigmoid(x) * 2.0


args = [torch.randn(3, 3)]
