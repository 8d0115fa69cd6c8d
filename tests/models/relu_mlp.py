"""A small MLP with relu (KernelBench style): the target of Inductor's injected relu bug."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h * 2.0) + 1.0


def get_inputs():
    return [torch.randn(4, 16)]
