"""Variance and standard deviation over dim 0 of float32 data of normal scale. On the "huge" input set
(magnitudes near float32's overflow) the sums of squares overflow float32: compiled (Inductor accumulates
in float32) is inf where the fp64 run, and eager's std (a double accumulator on CPU), stay finite."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.var(0), x.std(0)


def get_inputs():
    return [torch.randn(64, 16)]
