"""RANDOM: F.rrelu with training=True (randomized leaky slope sampled per element in [1/8, 1/3]); batch 16, 64 ch, 64x64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 64
height = 64
width = 64


class Model(nn.Module):
    def forward(self, x):
        return F.rrelu(x, lower=1.0 / 8, upper=1.0 / 3, training=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
