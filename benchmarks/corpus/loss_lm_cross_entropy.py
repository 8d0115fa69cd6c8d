"""Language-model loss: shift logits/labels by one token, flatten, cross-entropy over a 32000 vocab with ignore_index -100 on padding; batch 2, seq 512."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 512
vocab_size = 32000
pad_fraction = 0.1
ignore_index = -100


class Model(nn.Module):
    def __init__(self, ignore_index):
        super().__init__()
        self.ignore_index = ignore_index

    def forward(self, logits, labels):
        shift_logits = logits[:, :-1, :].reshape(-1, logits.shape[-1])
        shift_labels = labels[:, 1:].reshape(-1)
        return F.cross_entropy(shift_logits, shift_labels, ignore_index=self.ignore_index)


def get_inputs():
    labels = torch.randint(0, vocab_size, (batch_size, seq_len))
    pad = torch.rand(batch_size, seq_len) < pad_fraction
    labels = torch.where(pad, torch.full_like(labels, ignore_index), labels)
    return [torch.randn(batch_size, seq_len, vocab_size), labels]


def get_init_inputs():
    return [ignore_index]
