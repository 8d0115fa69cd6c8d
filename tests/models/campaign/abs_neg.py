"""Absolute value and negation (minifier style)."""
import torch


class Repro(torch.nn.Module):
    def forward(self, x, y):
        return (-x).abs() + y * 1.0 + x


args = [torch.randn(7), torch.randn(7)]
