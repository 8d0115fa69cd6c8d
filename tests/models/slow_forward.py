"""A model whose forward takes 120 s (a sleep): loading and capturing it run the forward, so a run's --time-budget must cover them."""
import time

import torch
import torch.nn as nn

SECONDS = 120.0


class Model(nn.Module):
    def forward(self, x):
        time.sleep(SECONDS)
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(4, 8)]
