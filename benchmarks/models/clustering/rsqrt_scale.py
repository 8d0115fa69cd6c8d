"""An inverse-root scale, `rsqrt(v) * g`: correct compiled; the rewrite rsqrt(v) -> v ** -0.5 (the library's
`pow_neg_half_is_rsqrt`, tests/models/live_bug_rules) reaches ledger #1 on the special inputs (CPU)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, v, g):
        return torch.rsqrt(v) * g


def get_inputs():
    return [torch.rand(16, 24) + 0.05, torch.randn(16, 24)]
