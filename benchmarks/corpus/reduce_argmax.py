"""Single op: torch.argmax over the class dim (greedy prediction, int64 output); batch 256 x 32000 vocab logits."""
import torch
import torch.nn as nn

batch_size = 256
vocab_size = 32000


class Model(nn.Module):
    def forward(self, logits):
        return torch.argmax(logits, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, vocab_size)]


def get_init_inputs():
    return []
