"""Live bug (torch 2.13 CPU Inductor): a hand-written stable softmax of `x / T`, integer x.

Spelled with `max(dim, keepdim=True).values` the program does not match joint_graph's
div_softmax_pattern (it looks for amax) and compiles correctly. The rewrite
`max(d, keepdim=True).values -> amax(d, keepdim=True)` (rules/inductor_patterns.py
max_keepdim_values_is_amax) builds the pattern, whose replacement computes `x - amax(x)` in int8.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        s = x / 0.5
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        return e / e.sum(dim=-1, keepdim=True)


def get_inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-128, 128, (4, 16), dtype=torch.int8, generator=g)
    x[0, :4] = torch.tensor([-128, 127, 0, 1], dtype=torch.int8)
    return [x]
