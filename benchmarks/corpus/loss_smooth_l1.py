"""Detection box-regression loss: F.smooth_l1_loss (beta 1/9 as in Faster R-CNN) on box deltas, summed and divided by the number of sampled anchors; batch 8 images x 8192 anchors x 4."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_anchors = 8192
beta = 1.0 / 9.0


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, pred_deltas, target_deltas):
        loss = F.smooth_l1_loss(pred_deltas, target_deltas, beta=self.beta, reduction="sum")
        return loss / pred_deltas.shape[0] / pred_deltas.shape[1]


def get_inputs():
    shape = (batch_size, num_anchors, 4)
    return [torch.randn(shape) * 0.5, torch.randn(shape) * 0.5]


def get_init_inputs():
    return [beta]
