"""bf16 MLP activation: fp32 hidden cast to bfloat16, bias add in bf16, tanh-GELU in bf16, times a bf16 gate, back to fp32; batch 8, seq 512, hidden 3072."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 512
hidden = 3072


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.bias = nn.Parameter((0.1 * torch.randn(hidden)).to(torch.bfloat16))

    def forward(self, x, gate):
        h = x.to(torch.bfloat16) + self.bias
        h = F.gelu(h, approximate="tanh") * gate.to(torch.bfloat16)
        return h.float()


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.rand(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
