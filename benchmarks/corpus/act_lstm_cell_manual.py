"""LSTM cell written by hand: fused gate matmuls, sigmoid input/forget/output gates, tanh candidate and cell, unrolled over 8 steps; batch 256, input 512, hidden 1024."""
import torch
import torch.nn as nn

batch_size = 256
input_size = 512
hidden_size = 1024
steps = 8


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w_ih = nn.Linear(input_size, 4 * hidden_size)
        self.w_hh = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x_seq, h, c):
        outputs = []
        for t in range(x_seq.shape[0]):
            gates = self.w_ih(x_seq[t]) + self.w_hh(h)
            i, f, g, o = gates.chunk(4, dim=-1)
            i, f, o = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o)
            c = f * c + i * torch.tanh(g)
            h = o * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs, dim=0), c


def get_inputs():
    return [
        torch.randn(steps, batch_size, input_size),
        torch.zeros(batch_size, hidden_size),
        torch.zeros(batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size]
