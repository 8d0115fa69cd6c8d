"""A phase wrapped to [0, 2 pi) and its sine: ledger #8 (vectorized float remainder is a - floor(a / b) * b) on the special inputs' large phases."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, t, freq):
        phase = torch.remainder(t * freq, 2 * math.pi)
        return torch.sin(phase), phase


def get_inputs():
    return [torch.rand(8, 32) * 100.0, torch.rand(8, 32) * 10.0]
