"""bf16 LayerNorm: fp32 activations cast to bfloat16 inside forward, nn.LayerNorm held in bf16 (weights bf16), output bf16; batch 8, seq 512, hidden 2048."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 512
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden).to(torch.bfloat16)

    def forward(self, x):
        return self.ln(x.to(torch.bfloat16))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
