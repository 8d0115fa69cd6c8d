"""Mean and variance normalisation (minifier style)."""
import torch


class Repro(torch.nn.Module):
    def forward(self, x):
        m = x.mean(dim=-1, keepdim=True)
        return (x - m) * 2.0 + m


args = [torch.randn(4, 8)]
