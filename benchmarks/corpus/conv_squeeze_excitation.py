"""Squeeze-and-excitation block: global avg pool, FC reduce 16x - ReLU - FC - sigmoid, channel rescale; batch 8, 256 ch, 28x28."""
import torch
import torch.nn as nn

batch_size = 8
channels = 256
reduction = 16
height = 28
width = 28


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        b, c = x.shape[0], x.shape[1]
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return x * s.view(b, c, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, reduction]
