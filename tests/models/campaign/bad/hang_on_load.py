"""A model file that hangs while loading: its job must time out and cost nothing else."""
import time

import torch
import torch.nn as nn

time.sleep(3600)


class Model(nn.Module):
    def forward(self, x):
        return x + 1.0


def get_inputs():
    return [torch.randn(3)]
