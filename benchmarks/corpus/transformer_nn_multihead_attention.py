"""nn.MultiheadAttention (batch_first) self-attention with a bool key_padding_mask from lengths, returning output and head-averaged weights; batch 8, seq 256, d 512, 8 heads."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 256
d_model = 512
n_heads = 8


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True)

    def forward(self, x, lengths):
        pad = torch.arange(x.shape[1], device=x.device)[None, :] >= lengths[:, None]
        out, weights = self.mha(x, x, x, key_padding_mask=pad, need_weights=True)
        return out, weights


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model), torch.randint(1, seq_len + 1, (batch_size,))]


def get_init_inputs():
    return [d_model, n_heads]
