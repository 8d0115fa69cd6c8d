"""Compiled is the wrong side (ledger #15): le != le of an index-built bool mask crashes Inductor's bounds analysis."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        a = torch.arange(128)
        le = a[None, :] <= a[:, None]
        return (le != le), x + 1


def get_inputs():
    return [torch.zeros(4)]
