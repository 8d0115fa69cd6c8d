"""F.one_hot with a fixed num_classes (int64 output), a float one-hot mixup of labels, and a per-sample class histogram summed over a sequence; batch 1024 labels and 128 sequences x 128, 1000 classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
seq_len = 128
num_sequences = 128
num_classes = 1000
mix = 0.3


class Model(nn.Module):
    def __init__(self, num_classes, mix):
        super().__init__()
        self.num_classes = num_classes
        self.mix = mix

    def forward(self, labels_a, labels_b, seq_labels):
        oh_a = F.one_hot(labels_a, self.num_classes)
        oh_b = F.one_hot(labels_b, self.num_classes)
        mixed = (1 - self.mix) * oh_a.float() + self.mix * oh_b.float()
        counts = F.one_hot(seq_labels, self.num_classes).sum(dim=1)
        return oh_a, mixed, counts


def get_inputs():
    return [
        torch.randint(0, num_classes, (batch_size,)),
        torch.randint(0, num_classes, (batch_size,)),
        torch.randint(0, num_classes, (num_sequences, seq_len)),
    ]


def get_init_inputs():
    return [num_classes, mix]
