"""Segmentation loss: log_softmax over classes then F.nll_loss per pixel with ignore_index 255 (PASCAL VOC style); batch 8, 21 classes, 128x128."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_classes = 21
height = 128
width = 128
ignore_index = 255


class Model(nn.Module):
    def __init__(self, ignore_index):
        super().__init__()
        self.ignore_index = ignore_index

    def forward(self, logits, target):
        return F.nll_loss(F.log_softmax(logits, dim=1), target, ignore_index=self.ignore_index)


def get_inputs():
    target = torch.randint(0, num_classes, (batch_size, height, width))
    border = torch.rand(batch_size, height, width) < 0.05
    target = torch.where(border, torch.full_like(target, ignore_index), target)
    return [torch.randn(batch_size, num_classes, height, width), target]


def get_init_inputs():
    return [ignore_index]
