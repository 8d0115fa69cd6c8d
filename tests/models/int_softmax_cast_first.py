"""Live bug (torch 2.13 CPU Inductor): `softmax(x / T)` of an integer x, via joint_graph's div_softmax_pattern.

This seed casts first, `softmax(x.float() / T)`, which compiles correctly: the pattern's input is
float32. The rewrite `x.float() / T -> x / T` (rules/inductor_patterns.py int_div_casts_first, exact:
true division casts an integer tensor to float32 anyway) moves the cast past the scaling, and then
the pattern's replacement computes `x - amax(x)` in int8, which wraps around: the compiled variant
gives [0.88, 0.12, 0, 0] where eager gives [0, 1, 0, 0] for the row [-128, 127, 0, 1].
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x.float() / 0.5, dim=-1)


def get_inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-128, 128, (4, 16), dtype=torch.int8, generator=g)
    x[0, :4] = torch.tensor([-128, 127, 0, 1], dtype=torch.int8)
    return [x]
