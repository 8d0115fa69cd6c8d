"""Model files in the three conventions load; bad ones give one clear line (BadInput)."""
from __future__ import annotations

import textwrap

import pytest
import torch

from eqsat_test.lowering.load import BadInput, load_model


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
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\ndef get_inputs(): return []\n",
     "eager mode raised TypeError"),
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


def test_a_model_without_inputs_is_a_model(tmp_path):
    """A forward that makes its tensors itself runs eagerly: it is a model like any other, with no inputs."""
    p = _write(tmp_path, """
        import torch
        class Model(torch.nn.Module):
            def forward(self):
                return torch.arange(6.0).reshape(2, 3).softmax(-1)
        def get_inputs(): return []
    """)
    m = load_model(p)
    assert m.inputs == () and m.convention == "kernelbench"


def test_missing_file(tmp_path):
    with pytest.raises(BadInput, match="no such file"):
        load_model(tmp_path / "nope.py")


def test_loaded_model_records_its_sizes(tmp_path):
    kb = _write(tmp_path, """
        import torch
        rows, cols = 2048, 1024
        class Model(torch.nn.Module):
            def forward(self, x): return torch.softmax(x, -1)
        def get_inputs(): return [torch.randn(rows, cols)]
    """)
    m = load_model(kb)  # the default: a test size
    assert set(m.sizes) >= {"policy", "max_elements", "scaled", "input_shapes", "given_shapes", "fallback", "note"}
    assert m.sizes["policy"] == "test" and m.sizes["given_shapes"] == [[2048, 1024]]
    assert m.inputs[0].numel() <= m.sizes["max_elements"] == 2 ** 18
    assert m.sizes["input_shapes"] == [list(m.inputs[0].shape)]
    g = load_model(kb, sizes="given")
    assert g.sizes["policy"] == "given" and g.inputs[0].shape == (2048, 1024)


@pytest.mark.slow
def test_a_2_to_the_28_element_input_runs_at_test_size_without_a_timeout(eqsat, tmp_path):
    """A KernelBench softmax over a 4096 x 65536 input (1 GiB) is tested at a test size:
    never built at full size, no timeout, and the size used is in the report and the bundle."""
    import json
    import math

    from conftest import TEST_MODELS
    out = tmp_path / "out"
    res = eqsat(TEST_MODELS / "huge_softmax.py", "-n", "2", "--jobs", "1", "--timeout", "120",
                "-r", TEST_MODELS / "e2e_rules", "-b", "inductor", "--inputs", "given,random",
                "--no-sweep", "--no-artifacts", "--out", out, "--json", timeout=500)
    assert res.rc == 0, f"rc={res.rc}\nstdout: {res.stdout[-2000:]}\nstderr: {res.stderr[-3000:]}"
    report = res.json
    assert not [f for f in report["findings"] if f["kind"] == "timeout"]
    sizes = report["sizes"]
    assert sizes["policy"] == "test" and not sizes["fallback"] and sizes["given_shapes"] == [[4096, 65536]]
    assert sizes["scaled"] and math.prod(sizes["input_shapes"][0]) <= sizes["max_elements"] == 2 ** 18
    manifest = json.loads((out / "bundle" / "manifest.json").read_text())
    assert manifest["sizes"] == sizes
    assert (out / "bundle" / "g0.inputs.pt").stat().st_size < 4 << 20  # 512 x 512 floats, not 1 GiB
