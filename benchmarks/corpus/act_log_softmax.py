"""Single op: F.log_softmax over the vocab dim of LM logits; 256 tokens x 32000 vocab."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 256
vocab_size = 32000


class Model(nn.Module):
    def forward(self, x):
        return F.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(num_tokens, vocab_size) * 5.0]


def get_init_inputs():
    return []
