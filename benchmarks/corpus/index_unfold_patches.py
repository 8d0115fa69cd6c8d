"""Sliding windows: Tensor.unfold into overlapping 16x16 patches with stride 8 (windowed statistics), and F.unfold im2col of 3x3 neighborhoods; batch 8, 32 ch, 128x128."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 32
height = 128
width = 128
patch = 16
stride = 8


class Model(nn.Module):
    def __init__(self, patch, stride):
        super().__init__()
        self.patch = patch
        self.stride = stride

    def forward(self, x):
        windows = x.unfold(2, self.patch, self.stride).unfold(3, self.patch, self.stride)
        win_mean = windows.mean(dim=(-1, -2))
        win_max = windows.amax(dim=(-1, -2))
        cols = F.unfold(x, kernel_size=3, padding=1)
        return win_mean, win_max, cols


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [patch, stride]
