"""Interest earned at small rates over a few years, `principal * (exp(rate * years) - 1)` written with expm1: three ops, one live CPU bug (ledger #6: vectorized expm1 emitted as exp(x) - 1, which loses small arguments)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, rate, years, principal):
        return torch.expm1(rate * years) * principal


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.rand(16, 64, generator=g) * 1e-6, torch.rand(16, 64, generator=g) * 10.0,
            torch.rand(16, 64, generator=g) * 1000.0]
