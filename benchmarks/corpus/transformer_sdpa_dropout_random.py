"""RANDOM: F.scaled_dot_product_attention with dropout_p=0.1 applied during the forward (training-style attention dropout); batch 4, 12 heads, seq 512, head_dim 64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
n_heads = 12
seq_len = 512
head_dim = 64
dropout_p = 0.1


class Model(nn.Module):
    def __init__(self, dropout_p):
        super().__init__()
        self.dropout_p = dropout_p

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout_p)


def get_inputs():
    shape = (batch_size, n_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [dropout_p]
