"""Encoder-decoder cross attention (T5/Whisper decoder style): queries from the decoder, keys/values from encoder memory, SDPA, output projection + residual + LayerNorm; batch 4, 128 decoder x 1500 encoder tokens, d 768."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
tgt_len = 128
src_len = 1500
d_model = 768
n_heads = 12


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.o = nn.Linear(d_model, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, memory):
        b, t, d = x.shape
        s = memory.shape[1]
        h = self.n_heads
        q = self.q(x).view(b, t, h, d // h).transpose(1, 2)
        k, v = self.kv(memory).view(b, s, 2, h, d // h).permute(2, 0, 3, 1, 4).unbind(0)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.norm(x + self.o(y.transpose(1, 2).reshape(b, t, d)))


def get_inputs():
    return [torch.randn(batch_size, tgt_len, d_model), torch.randn(batch_size, src_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
