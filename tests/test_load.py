"""Model files in the three conventions load; bad ones give one clear line (BadInput)."""
from __future__ import annotations

import textwrap

import pytest
import torch

from lowering.load import BadInput, load_model


def _write(tmp_path, text: str, name: str = "m.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_kernelbench_minifier_and_instance_conventions(tmp_path):
    kb = _write(tmp_path, """
        import torch
        class Model(torch.nn.Module):
            def __init__(self, k):
                super().__init__(); self.k = k
            def forward(self, x): return x * self.k
        def get_inputs(): return [torch.ones(2)]
        def get_init_inputs(): return [3]
    """, "kb.py")
    m = load_model(kb)
    assert m.convention == "kernelbench" and torch.equal(m.module(*m.inputs), torch.full((2,), 3.0))
    mini = _write(tmp_path, """
        import torch
        class Repro(torch.nn.Module):
            def forward(self, x): return x + 1
        args = [torch.zeros(3)]
    """, "mini.py")
    assert load_model(mini).convention == "minifier"
    inst = _write(tmp_path, """
        import torch
        model = torch.nn.Linear(3, 2)
        example_inputs = (torch.randn(4, 3),)
    """, "inst.py")
    assert load_model(inst).convention == "instance"


@pytest.mark.parametrize("text,needle", [
    ("def f(:\n", "syntax error"),
    ("x = 1\n", "no model found"),
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\ndef get_inputs(): return []\n", "empty"),
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): raise ValueError('boom')\ndef get_inputs(): return [torch.ones(1)]\n", "eager mode raised ValueError: boom"),
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\ndef get_inputs(): return ['a']\n", "inputs must be tensors"),
    ("raise RuntimeError('at import')\n", "raised while being imported"),
])
def test_bad_model_files(tmp_path, text, needle):
    p = _write(tmp_path, text)
    with pytest.raises(BadInput) as e:
        load_model(p)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg


def test_missing_file(tmp_path):
    with pytest.raises(BadInput, match="no such file"):
        load_model(tmp_path / "nope.py")
