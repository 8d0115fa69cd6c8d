"""Nucleus (top-p 0.9) logit filtering without sampling: sort descending, softmax, cumsum, shift mask, scatter back to vocab order, masked_fill -inf, renormalized softmax probabilities; 64 sequences x 32000 vocab."""
import torch
import torch.nn as nn

batch_size = 64
vocab_size = 32000
top_p = 0.9


class Model(nn.Module):
    def __init__(self, top_p):
        super().__init__()
        self.top_p = top_p

    def forward(self, logits):
        sorted_logits, sorted_idx = torch.sort(logits, dim=-1, descending=True)
        cum = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
        remove_sorted = cum > self.top_p
        remove_sorted = torch.cat([torch.zeros_like(remove_sorted[:, :1]), remove_sorted[:, :-1]], dim=-1)
        remove = torch.zeros_like(remove_sorted).scatter(1, sorted_idx, remove_sorted)
        return torch.softmax(logits.masked_fill(remove, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(batch_size, vocab_size) * 3.0]


def get_init_inputs():
    return [top_p]
