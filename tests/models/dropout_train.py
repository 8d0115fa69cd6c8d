"""Dropout in training mode: random by design; must be set aside as nondeterministic, not reported."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.dropout(x * 2.0, 0.5, training=True) + 1.0


def get_inputs():
    return [torch.randn(16, 16)]
