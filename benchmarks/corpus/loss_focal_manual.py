"""Sigmoid focal loss written by hand (RetinaNet, alpha 0.25, gamma 2): BCE-with-logits per element times alpha_t * (1 - p_t)^gamma, summed / num positives; 8 images x 16368 anchors x 80 classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_anchors = 16368
num_classes = 80
alpha = 0.25
gamma = 2.0


class Model(nn.Module):
    def __init__(self, alpha, gamma):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, logits, targets):
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        loss = alpha_t * (1 - p_t) ** self.gamma * ce
        num_pos = targets.sum().clamp(min=1.0)
        return loss.sum() / num_pos


def get_inputs():
    shape = (batch_size, num_anchors, num_classes)
    return [torch.randn(shape) * 2.0 - 3.0, (torch.rand(shape) < 0.001).float()]


def get_init_inputs():
    return [alpha, gamma]
