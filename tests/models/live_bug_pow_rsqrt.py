"""Live bug (torch 2.13 CPU Inductor): `x ** -0.5` compiles to pow(x, -0.5), not rsqrt.

Eager computes `x ** -0.5` bitwise equal to `torch.rsqrt(x)` (-0.0 -> -inf, -inf -> NaN); the
compiled `x ** -0.5` gives +inf at -0.0 and 0.0 at -inf. This seed uses torch.rsqrt, which
compiles correctly; the rewrite rsqrt(x) -> x ** -0.5 (tests/models/live_bug_rules/, also
`pow_neg_half_is_rsqrt` in rules/misc.py) exposes the bug on the special input set.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(16) * 0.5)

    def forward(self, x, var):
        inv_std = torch.rsqrt(var)
        return (x - x.mean(dim=-1, keepdim=True)) * inv_std * self.gain


def get_inputs():
    return [torch.randn(8, 16), torch.rand(8, 16) + 0.1]
