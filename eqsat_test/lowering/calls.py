"""How a model is called: positional inputs, or keyword inputs (a dict: `attention_mask=...`) through KeywordCall."""
from __future__ import annotations

import torch


class KeywordCall(torch.nn.Module):
    """A model whose inputs are keyword arguments (Hugging Face's `input_ids=`, `attention_mask=`), called
    positionally: `forward(*values)` calls the model with `names` in order. Capture, sizing and eager checks
    then treat its inputs like any model's."""

    def __init__(self, module: torch.nn.Module, names) -> None:
        super().__init__()
        self.inner = module
        self.names = tuple(names)

    def forward(self, *values):
        return self.inner(**dict(zip(self.names, values)))


def positional(module, inputs):
    """(module, inputs as a list or tuple): keyword inputs (a dict) become a KeywordCall's values in order."""
    if isinstance(inputs, dict):
        return KeywordCall(module, inputs.keys()), tuple(inputs.values())
    return module, inputs
