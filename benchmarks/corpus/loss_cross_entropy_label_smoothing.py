"""Cross-entropy with label smoothing 0.1 and per-class weights (nn.CrossEntropyLoss), classifier-head training loss; batch 256, 1000 classes."""
import torch
import torch.nn as nn

batch_size = 256
num_classes = 1000
label_smoothing = 0.1


class Model(nn.Module):
    def __init__(self, num_classes, label_smoothing):
        super().__init__()
        weight = torch.rand(num_classes) + 0.5
        self.loss = nn.CrossEntropyLoss(weight=weight, label_smoothing=label_smoothing)

    def forward(self, logits, targets):
        return self.loss(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, num_classes) * 3.0, torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [num_classes, label_smoothing]
