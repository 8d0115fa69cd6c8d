"""Single op: F.mse_loss (mean) between predicted and target images (pixel reconstruction loss); batch 16, 3x256x256."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 3
height = 256
width = 256


class Model(nn.Module):
    def forward(self, pred, target):
        return F.mse_loss(pred, target)


def get_inputs():
    shape = (batch_size, channels, height, width)
    return [torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
