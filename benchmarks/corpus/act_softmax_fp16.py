"""fp16 softmax: half-precision attention scores, softmax computed with dtype=torch.float32 then cast back to fp16, plus a plain fp16 log_softmax; batch 4, 12 heads, 256x256."""
import torch
import torch.nn as nn

batch_size = 4
n_heads = 12
seq_len = 256


class Model(nn.Module):
    def forward(self, scores):
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)
        return probs, torch.log_softmax(scores, dim=-1)


def get_inputs():
    return [(torch.randn(batch_size, n_heads, seq_len, seq_len) * 4.0).half()]


def get_init_inputs():
    return []
