"""A clean block with dropout in training mode: nondeterministic (two eager runs differ), no root cause; its notes are one per op."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 32)

    def forward(self, x):
        return torch.nn.functional.dropout(torch.relu(self.fc(x)), p=0.3, training=True) + x


def get_inputs():
    return [torch.randn(8, 32)]
