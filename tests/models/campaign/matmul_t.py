"""A matmul with a double transpose (minifier style)."""
import torch


class Repro(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b.t().t()) + a.sum()


args = [torch.randn(3, 3), torch.randn(3, 3)]
