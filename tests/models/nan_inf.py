"""A model that produces NaN and inf: log of negatives, division by zero, 0/0, exp overflow."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, d):
        a = torch.log(x)            # NaN where x < 0, -inf at 0
        b = x / d                   # +-inf where d == 0, NaN at 0/0
        c = torch.exp(x * 100.0)    # inf for large x
        return a + 1.0, b * 2.0, c - 1.0, torch.sqrt(x) * 3.0


def get_inputs():
    x = torch.randn(6, 7)
    x[0, 0] = 0.0
    d = torch.randint(-1, 2, (6, 7)).float()
    return [x, d]
