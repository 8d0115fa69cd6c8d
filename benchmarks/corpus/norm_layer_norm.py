"""Single op: nn.LayerNorm over the last dim 4096 with affine weight and bias; batch 8, seq 1024, hidden 4096."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
hidden = 4096


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.1, 0.1)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
