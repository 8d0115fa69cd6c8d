"""A normalizing scale, `x * rsqrt(v)`: correct compiled; the rewrite rsqrt(v) -> v ** -0.5 (tests/models/live_bug_rules) reaches ledger #1 on the special inputs (CPU)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, v):
        return torch.tanh(x) * torch.rsqrt(v) + 0.5 * x


def get_inputs():
    return [torch.randn(16, 24), torch.rand(16, 24) + 0.05]
