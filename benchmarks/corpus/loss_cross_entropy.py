"""Single op: F.cross_entropy (mean) of ImageNet logits against class targets; batch 256, 1000 classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
num_classes = 1000


class Model(nn.Module):
    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, num_classes) * 3.0, torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
