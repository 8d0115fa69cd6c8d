"""Eager is the wrong side on CUDA (pytorch#153210, open): addcmul of int16 tensors with a `value` that does not fit the result's integer dtype raises on CPU ("value cannot be converted ... without overflow", torch.add's rule) but runs silently on CUDA. A GPU seed: on CPU the program itself raises."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, base, t1, t2):
        return torch.addcmul(base, t1, t2, value=988328483643648370)


def get_inputs():
    return [torch.tensor(-4015619983489386247),
            torch.tensor([[[25527, -21905, -12030, 13427, -1546]]], dtype=torch.int16),
            torch.tensor(-752003609, dtype=torch.int32)]
