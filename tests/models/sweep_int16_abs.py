"""A float32-only model whose compiled form is wrong at int16 (found by eqsat-test's dtype sweep).

`x.abs() + 1.0`: run with int16 inputs, eager computes abs in int16, where abs(-32768) wraps to
-32768, so the output is -32767.0; Inductor (torch 2.13, CPU) fuses abs into the float add and
computes it without the int16 wrap-around: +32769.0. int8, int32 and int64 wrap like eager; only
int16 differs. The model itself never sees an int16: `eqsat-test` reports it as a
`seed-miscompile` with sweep "dtype=int16" and a repro.py on the swept inputs.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = x.abs() + 1.0
        return y * 0.5


def get_inputs():
    return [torch.randn(4, 33)]
