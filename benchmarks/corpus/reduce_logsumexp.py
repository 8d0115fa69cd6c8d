"""Single op: torch.logsumexp over the vocabulary dim (log partition function of LM logits); 4096 tokens x 8192 vocab."""
import torch
import torch.nn as nn

num_tokens = 4096
vocab_size = 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.logsumexp(x, dim=-1)


def get_inputs():
    return [torch.randn(num_tokens, vocab_size) * 5.0]


def get_init_inputs():
    return []
