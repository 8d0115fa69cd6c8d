"""Single op: F.l1_loss with reduction sum over per-pixel reconstructions (super-resolution training); batch 16, 3x192x192."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 3
height = 192
width = 192


class Model(nn.Module):
    def forward(self, pred, target):
        return F.l1_loss(pred, target, reduction="sum")


def get_inputs():
    shape = (batch_size, channels, height, width)
    return [torch.rand(shape), torch.rand(shape)]


def get_init_inputs():
    return []
