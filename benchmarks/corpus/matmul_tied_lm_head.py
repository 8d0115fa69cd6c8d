"""GPT LM head with tied embeddings: final LayerNorm then logits = h @ wte^T (weight shared with the token embedding), vocab 50257, d 768; batch 4, seq 128."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 128
vocab_size = 50257
d_model = 768


class Model(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.wte.weight, std=0.02)
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, h):
        return F.linear(self.ln_f(h), self.wte.weight)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [vocab_size, d_model]
