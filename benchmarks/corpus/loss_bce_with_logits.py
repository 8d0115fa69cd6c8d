"""Multi-label classification loss: nn.BCEWithLogitsLoss with per-class pos_weight over soft 0/1 targets; batch 256, 1000 labels."""
import torch
import torch.nn as nn

batch_size = 256
num_labels = 1000


class Model(nn.Module):
    def __init__(self, num_labels):
        super().__init__()
        self.loss = nn.BCEWithLogitsLoss(pos_weight=torch.rand(num_labels) * 9.0 + 1.0)

    def forward(self, logits, targets):
        return self.loss(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, num_labels) * 4.0, (torch.rand(batch_size, num_labels) < 0.05).float()]


def get_init_inputs():
    return [num_labels]
