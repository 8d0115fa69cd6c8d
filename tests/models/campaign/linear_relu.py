"""Linear layer and relu (KernelBench style, with constructor arguments)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.relu(self.fc(x)) + x


def get_inputs():
    return [torch.randn(3, 4)]


def get_init_inputs():
    return [4]
