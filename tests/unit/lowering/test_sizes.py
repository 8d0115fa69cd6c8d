"""Test sizes (lowering/sizes.py via load_model): found on the meta device, never built at full
size, validated eagerly, mended or given up with a note, recorded."""
from __future__ import annotations

import ast
import math
import textwrap
import time
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode

from eqsat_test.lowering.load import BadInput, load_model
from eqsat_test.lowering.sizes import Source, _options, find_literals, plan_sizes

REPO = Path(__file__).resolve().parents[3]
HUGE = REPO / "tests" / "models" / "huge_softmax.py"
BOUND = 2 ** 18


def _write(tmp_path, text: str, name: str = "m.py") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


class _LargestReal(TorchFunctionMode):
    """The most elements of any real (not meta) tensor a torch call returned."""

    def __init__(self):
        super().__init__()
        self.most = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                self.most = max(self.most, t.numel())
        return out


def _within(m, bound=BOUND) -> bool:
    return all(math.prod(s) <= bound for s in m.sizes["input_shapes"] if s is not None)


def test_literals_are_named_by_what_they_set():
    tree = ast.parse(textwrap.dedent("""
        import torch
        batch_size = 16
        rows = (500000, 100000)
        c1, s1 = 256, 64
        d_model = 12 * 64
        flag = True
        class Model(torch.nn.Module):
            size = 4096
        def helper(): return 777
        def get_inputs(): return [torch.randn(batch_size, 4096)]
    """))
    names = {lit.name: lit.given for lit in find_literals(tree)}
    assert names["batch_size"] == 16 and names["rows[0]"] == 500000 and names["rows[1]"] == 100000
    assert names["c1"] == 256 and names["s1"] == 64
    assert sorted(v for k, v in names.items() if k.startswith("d_model@")) == [12, 64]
    assert any(k.startswith("get_inputs@") and v == 4096 for k, v in names.items())
    assert True not in names.values() and 777 not in names.values()  # bools, helpers, classes: not sizes
    assert list(names.values()).count(4096) == 1


def test_options_keep_divisibility_and_oddness():
    assert _options(768, 2.6, 8)[0] == 192  # / 4: a head count of 12 still divides it
    assert _options(5632, 11, 8)[0] == 352
    assert all(o % 2 for o in _options(1025, 2, 8))  # odd sizes stay odd (tail loops)
    assert _options(16, 100, 8) == [8]  # never below the floor
    assert _options(512, 1.5, 8)[0] == 256  # a round value, not 341
    assert _options(20, 1.15, 8, e=10)[0] == 17  # an exponent: 2 ** 20 -> 2 ** 17, not 2 ** 10


def test_huge_softmax_is_never_built_at_full_size():
    with _LargestReal() as watch:
        t0 = time.perf_counter()
        m = load_model(HUGE)
        seconds = time.perf_counter() - t0
    s = m.sizes
    assert s["policy"] == "test" and s["max_elements"] == BOUND and not s["fallback"]
    assert s["given_shapes"] == [[4096, 65536]]
    assert s["scaled"] == {"batch_size": [4096, 512], "dim": [65536, 512]}
    assert s["input_shapes"] == [list(m.inputs[0].shape)] == [[512, 512]]
    assert watch.most <= BOUND  # nothing bigger than the test size was ever allocated
    assert seconds < 30  # ~0.05 s warm; generous for a loaded machine and a cold torch._dynamo


def test_given_sizes_on_request(tmp_path):
    p = _write(tmp_path, """
        import torch
        rows, cols = 1024, 512
        class Model(torch.nn.Module):
            def forward(self, x): return x.sum(-1)
        def get_inputs(): return [torch.randn(rows, cols)]
    """)
    m = load_model(p, sizes="given")
    assert m.inputs[0].shape == (1024, 512)
    assert m.sizes["policy"] == "given" and m.sizes["scaled"] == {}
    assert m.sizes["input_shapes"] == m.sizes["given_shapes"] == [[1024, 512]]
    t = load_model(p)  # the default: a test size
    assert t.sizes["policy"] == "test" and _within(t) and t.sizes["given_shapes"] == [[1024, 512]]
    big = load_model(p, max_elements=2 ** 20)  # the bound is an option: within it, nothing changes
    assert big.sizes["scaled"] == {} and big.inputs[0].shape == (1024, 512)
    with pytest.raises(BadInput, match="sizes must be"):
        load_model(p, sizes="small")


def test_small_models_load_exactly_as_before(tmp_path):
    p = _write(tmp_path, """
        import torch
        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__(); self.lin = torch.nn.Linear(n, n)
            def forward(self, x): return self.lin(x)
        def get_inputs(): return [torch.randn(4, 16)]
        def get_init_inputs(): return [16]
    """)
    a, b = load_model(p), load_model(p, sizes="given")
    assert a.sizes["scaled"] == {} and not a.sizes["fallback"]
    assert torch.equal(a.inputs[0], b.inputs[0])  # same seed, same inputs, same weights
    assert torch.equal(a.module.lin.weight, b.module.lin.weight)


def test_derived_sizes_follow_and_parameters_are_bounded_too(tmp_path):
    p = _write(tmp_path, """
        import torch
        batch_size, seq_len = 4, 256
        n_heads, head_dim = 16, 64
        d_model = n_heads * head_dim
        class Model(torch.nn.Module):
            def __init__(self, d_model, n_heads):
                super().__init__()
                assert d_model % n_heads == 0
                self.h = n_heads
                self.qkv = torch.nn.Linear(d_model, 3 * d_model)
            def forward(self, x):
                b, s, d = x.shape
                q, k, v = self.qkv(x).view(b, s, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
                return torch.softmax(q @ k.transpose(-1, -2), -1) @ v
        def get_inputs(): return [torch.randn(batch_size, seq_len, d_model)]
        def get_init_inputs(): return [d_model, n_heads]
    """)
    m = load_model(p)
    s = m.sizes
    assert _within(m) and s["scaled"] and not s["fallback"]
    d = m.inputs[0].shape[-1]
    assert m.module.qkv.weight.shape == (3 * d, d) and m.module.qkv.weight.numel() <= BOUND
    assert s["param_elements"][0] == 3 * 1024 * 1024 + 3 * 1024 and s["param_elements"][1] < s["param_elements"][0]


def test_outputs_are_bounded_too_through_sizes_that_feed_them_alone(tmp_path):
    # features: the output is 24x the input (within the bound at the inputs' test size, far over
    # in all); one-hot: the classes literal sets the output's width and no input's shape
    from eqsat_test.lowering.sizes import OUTPUT_FACTOR
    feats = _write(tmp_path, """
        import torch
        batch_size, seq_len, num_freqs = 256, 2048, 8
        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("freqs", 2.0 ** torch.arange(n, dtype=torch.float32))
            def forward(self, t):
                p = t.unsqueeze(-1) * self.freqs
                return torch.cat([torch.sin(p), torch.cos(p), p], dim=-1)
        def get_inputs(): return [torch.rand(batch_size, seq_len)]
        def get_init_inputs(): return [num_freqs]
    """, "feats.py")
    onehot = _write(tmp_path, """
        import torch
        n, classes = 512, 4096
        class Model(torch.nn.Module):
            def forward(self, i):
                return torch.nn.functional.one_hot(i, classes).float()
        def get_inputs(): return [torch.randint(0, classes, (n,))]
    """, "onehot.py")
    for p, literal in ((feats, "batch_size"), (onehot, "classes")):
        m = load_model(p)
        out = m.module(*m.inputs)
        assert out.numel() <= OUTPUT_FACTOR * BOUND and _within(m), (p.name, out.shape)
        assert literal in m.sizes["scaled"] and not m.sizes["fallback"]
    # within the inputs' bound and the outputs': as written
    m = load_model(onehot, max_elements=2 ** 20)
    assert m.sizes["scaled"] == {} and m.module(*m.inputs).shape == (512, 4096)


def test_a_shrink_that_breaks_the_model_eagerly_is_mended(tmp_path):
    # seq_len indexes the position table: shrinking max_positions alone passes the meta device
    # (embedding does not check indices there) but raises eagerly; load finds the size to blame
    p = _write(tmp_path, """
        import torch
        batch_size, seq_len = 2, 1024
        max_positions, d_model = 1024, 768
        class Model(torch.nn.Module):
            def __init__(self, max_positions, d_model):
                super().__init__(); self.wpe = torch.nn.Embedding(max_positions, d_model)
            def forward(self, ids):
                return self.wpe(torch.arange(ids.shape[1]))[None] + ids[..., None]
        def get_inputs(): return [torch.randint(0, 10, (batch_size, seq_len))]
        def get_init_inputs(): return [max_positions, d_model]
    """)
    m = load_model(p)
    assert not m.sizes["fallback"] and m.sizes["scaled"], m.sizes
    assert m.module.wpe.weight.numel() <= BOUND
    assert m.module.wpe.num_embeddings >= m.inputs[0].shape[1]


def test_a_constant_below_a_size_shrinks_with_it(tmp_path):
    p = _write(tmp_path, """
        import torch
        channels, height = 16, 512
        crop = 448
        class Model(torch.nn.Module):
            def __init__(self, crop):
                super().__init__(); self.crop = crop
            def forward(self, x):
                top = (x.shape[-1] - self.crop) // 2
                return x.narrow(-1, top, self.crop).narrow(-2, top, self.crop)
        def get_inputs(): return [torch.randn(channels, height, height)]
        def get_init_inputs(): return [crop]
    """)
    m = load_model(p)
    assert _within(m) and not m.sizes["fallback"], m.sizes
    assert "crop" in m.sizes["scaled"] and m.module.crop <= m.inputs[0].shape[-1]


def test_no_smaller_size_works_falls_back_with_a_note(tmp_path):
    p = _write(tmp_path, """
        import torch
        rows, cols = 1024, 512
        class Model(torch.nn.Module):
            def forward(self, x): return x.reshape(1024, 512).softmax(-1)
        def get_inputs(): return [torch.randn(rows, cols)]
    """)
    m = load_model(p)
    s = m.sizes
    assert s["fallback"] and s["scaled"] == {} and s["note"] and "\n" not in s["note"]
    assert s["input_shapes"] == s["given_shapes"] == [[1024, 512]]


def test_minifier_and_instance_files_are_scaled_through_their_literals(tmp_path):
    mini = _write(tmp_path, """
        import torch
        class Repro(torch.nn.Module):
            def forward(self, x): return (x * 2).sum(0)
        args = [torch.randn(4096, 1024)]
    """, "mini.py")
    with _LargestReal() as watch:
        m = load_model(mini)
    assert m.convention == "minifier" and _within(m) and m.sizes["given_shapes"] == [[4096, 1024]]
    assert watch.most <= BOUND
    inst = _write(tmp_path, """
        import torch
        n = 1024
        model = torch.nn.Sequential(torch.nn.Linear(n, n), torch.nn.ReLU())
        example_inputs = (torch.randn(64, n),)
    """, "inst.py")
    m = load_model(inst)
    assert m.convention == "instance" and _within(m) and m.module[0].weight.numel() <= BOUND


def test_inputs_that_need_real_data_are_built_under_a_guard(tmp_path):
    # .item() cannot run on the meta device: sizes are found on real tensors, and a small enough
    # file still gets a test size by narrowing its inputs directly
    small = _write(tmp_path, """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x): return x.cumsum(-1)
        def get_inputs():
            n = int(torch.tensor(2048).item())
            return [torch.randn(n, 512)]
    """, "small.py")
    m = load_model(small)
    s = m.sizes
    assert "meta device" in s["note"] and _within(m) and s["scaled"] and not s["fallback"], s
    assert all(k.startswith("input 0 dim ") for k in s["scaled"])
    huge = _write(tmp_path, """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x): return x.cumsum(-1)
        def get_inputs():
            n = int(torch.tensor(1 << 16).item())
            return [torch.randn(4096, n)]
    """, "huge.py")
    with pytest.raises(BadInput, match="--sizes given") as e:
        load_model(huge)
    assert "\n" not in str(e.value)


def test_plan_alone_allocates_nothing_real(tmp_path, capsys):
    # even where the file names its device, and prints (it runs many times on the meta device)
    p = _write(tmp_path, """
        import torch
        batch, dim = 4096, 393216
        print("imported")
        class Model(torch.nn.Module):
            def forward(self, x): return torch.softmax(x, -1)
        def get_inputs(): return [torch.randn(batch, dim, device="cpu").to("cpu"), torch.zeros(dim).cpu()]
    """)
    src = Source(p, p.read_bytes(), "eqsat_test_plan_only")
    with _LargestReal() as watch:
        plan = plan_sizes(src, BOUND)
    assert watch.most == 0 and math.prod(plan.chosen.inputs[0]) <= BOUND
    assert plan.given.inputs == [[4096, 393216], [393216]] and plan.scaled["dim"][0] == 393216
    assert capsys.readouterr().out == ""
