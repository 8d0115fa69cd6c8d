"""A model file that kills its own process while loading (as a segfault in native code would)."""
import os
import signal

import torch
import torch.nn as nn

os.kill(os.getpid(), signal.SIGSEGV)


class Model(nn.Module):
    def forward(self, x):
        return x + 1.0


def get_inputs():
    return [torch.randn(3)]
