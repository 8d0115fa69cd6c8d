"""fp16 matmul: half-precision inputs multiplied with torch.matmul in fp16 and a scaled residual add, fp16 output; 128 x 512 @ 512 x 512."""
import torch
import torch.nn as nn

rows = 128
inner = 512
cols = 512


class Model(nn.Module):
    def forward(self, a, b, c):
        return torch.matmul(a, b) * 0.125 + c


def get_inputs():
    return [torch.randn(rows, inner).half(), torch.randn(inner, cols).half(), torch.randn(rows, cols).half()]


def get_init_inputs():
    return []
