"""The input sets and sweep points reach the behaviour they are for, on models written for each
(tests/models/inputs/): float32 accumulation overflowing on the huge set, special functions at their
domain edges, int64 index arithmetic past int32 and float64, empty and odd sizes and other layouts under
real Inductor. Whether the oracle then flags a difference is the oracle's own tests' business."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from eqsat_test.runners.checks.sweep_plan import SHAPE_EDGES, SweepConfig
from eqsat_test.runners.checks.sweep_run import run_sweeps
from eqsat_test.runners.oracle.inputs import input_sets

MODELS = Path(__file__).resolve().parent / "models" / "inputs"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"inputs_{name}", MODELS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sets(mod, seed: int = 0) -> dict:
    return {s.name.split("-")[0]: s.inputs for s in input_sets(mod.get_inputs(), seed=seed,
                                                                  kinds=("random", "huge", "domain"))}


@pytest.mark.slow  # a real Inductor compile
def test_huge_set_overflows_float32_accumulation_where_fp64_stays_finite():
    m = _load("var_std")
    model = m.Model()
    compiled = torch.compile(model, backend="inductor")
    sets = _sets(m)
    with torch.no_grad():
        for name in ("random", "huge"):
            (x,) = sets[name]
            eager, fp64, comp = model(x), model(x.double()), compiled(x)
            print(f"{name}: |x| max {float(x.abs().max()):.3g}; std eager {eager[1][:3].tolist()} "
                  f"fp64 {fp64[1][:3].tolist()} compiled {comp[1][:3].tolist()}")
            assert all(bool(torch.isfinite(t).all()) for t in fp64)
            if name == "random":
                assert all(bool(torch.isfinite(t).all()) for t in comp)
    # float32 accumulation overflows: compiled std is inf where fp64 (and eager, a double accumulator) is finite
    assert bool(torch.isinf(comp[1]).any()) and bool(torch.isfinite(eager[1]).all())
    assert bool(torch.isinf(comp[0]).any())  # var: compiled inf, fp64 finite


def test_domain_set_puts_special_function_inputs_at_their_edges():
    m = _load("special_functions")
    x, y = _sets(m)["domain"]
    assert int(((x.abs() - 1).abs() <= 1e-6).sum()) >= 20  # erfinv and atanh near +-1 ...
    assert bool(((x.abs() < 1) & (1 - x.abs() <= 1e-6)).any())  # ... just inside
    assert bool((x.abs() > 1).any())  # ... and just outside
    near1 = (y > 1) & (y - 1 <= 1e-6)
    assert bool(near1.any())  # acosh just above 1
    assert bool(((y > 0) & (y < torch.finfo(torch.float32).smallest_normal)).any())  # log, rsqrt of subnormals
    with torch.no_grad():
        erfinv, atanh, acosh, log, rsqrt = m.Model()(x, y)
    assert float(erfinv[torch.isfinite(erfinv)].abs().max()) > 3.5  # erfinv's steep end
    assert bool(torch.isinf(erfinv).any()) and bool(torch.isnan(erfinv).any())  # at and past +-1
    assert float(acosh[near1].max()) < 2e-3 and bool((acosh[near1] > 0).all())  # acosh's cancellation
    assert float(rsqrt[torch.isfinite(rsqrt)].max()) > 1e19


@pytest.mark.slow  # a real Inductor compile
def test_domain_set_under_inductor_prints_the_edge_errors():
    m = _load("special_functions")
    model = m.Model()
    compiled = torch.compile(model, backend="inductor")
    x, y = _sets(m)["domain"]
    with torch.no_grad():
        eager, comp, fp64 = model(x, y), compiled(x, y), model(x.double(), y.double())
    for name, e, c, f in zip(("erfinv", "atanh", "acosh", "log", "rsqrt"), eager, comp, fp64):
        both = torch.isfinite(e) & torch.isfinite(c)
        err_c = float((c[both].double() - f[both]).abs().max())
        err_e = float((e[both].double() - f[both]).abs().max())
        print(f"{name}: max |compiled - fp64| {err_c:.3g}, max |eager - fp64| {err_e:.3g}, "
              f"NaN/inf positions differ at {int((torch.isfinite(e) != torch.isfinite(c)).sum())}")
        assert int(both.sum()) > 0


def test_huge_set_takes_int64_index_arithmetic_past_int32_and_float64():
    m = _load("index_arith")
    (i,) = _sets(m)["huge"]
    assert bool((i.abs() > 2**31).any()) and bool((i.abs() > 2**53).any()) and bool((i.abs() >= 2**62 - 4).any())
    with torch.no_grad():
        q, f = m.Model()(i)
    wrapped = (i.abs() >= 2**62 - 4) & (torch.sign(q) != torch.sign(i)) & (i.abs() < 2**63 - 4)
    assert bool(wrapped.any())  # i * 4 overflows int64
    inexact = i.abs() > 2**53
    assert bool((f[inexact].to(torch.int64) != i[inexact] + 1).any())  # float64 no longer holds them exactly


@pytest.mark.slow  # a real Inductor compile
def test_size_and_layout_points_run_under_inductor(tmp_path):
    from eqsat_test.runners.protocol import load_module
    f = tmp_path / "prog.py"
    f.write_text("import torch\nDEVICE = torch.device('cpu')\n\n\ndef forward(x, y):\n"
                 "    return ((x * y).sum(1), torch.softmax(x - y, dim=-1), x.t() @ y)\n\n\n"
                 "def index_sources(x, y):\n    return {}\n")
    mod = load_module(str(f))
    x, y = torch.randn(12, 7), torch.randn(12, 7)
    out = run_sweeps(mod, [x, y], [False, False], SweepConfig(dtypes=(), dynamic="none"), backend="inductor")
    s = out["summary"]
    judged = {e["sweep"] for e in out["entries"] if e["kind"] != "skipped"}
    print(s["points"], s["eager_invalid_points"], s["failing"])
    assert {"layout=strided", "layout=expanded"} <= judged
    sized = [e["shapes"][0] for e in out["entries"] if e["sweep"].startswith("sizes=")]
    assert {z for sh in sized for z in sh} >= set(SHAPE_EDGES)  # empty, 1, and the odd sizes, compiled
    assert any(0 in sh for sh in sized)
