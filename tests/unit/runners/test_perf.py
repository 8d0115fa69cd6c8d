"""Performance divergence (runners/checks/perf.py): timing, screening against siblings, A/B confirmation, and the CLI's slow-variant notes.

- unit: the screen's threshold, absolute floor and minimum group size on synthetic timings;
- e2e, no false alarm: a bundled example's variants under `--perf` report their compiled-runtime
  spread and no slow-variant;
- e2e, true positive: a hand-made bundle where one equivalent program (sort each row, then sum)
  compiles to far slower code than its siblings (sum) is reported, confirmed A/B, with both
  programs and a perf repro; informational only (exit 0).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import REPO, TEST_MODELS, warm_server

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.checks.perf import MIN_ABS_S, THRESHOLD, screen, spread, time_call
from eqsat_test.runners.records import Result


def _manifest(n: int) -> Manifest:
    return Manifest(variants=tuple(Variant(f"g0_v{i:03d}" if i else "g0_seed", "g0", f"{i}.py", seed=i == 0)
                                   for i in range(n)), graphs=(Graph("g0"),))


def _results(times_us: list[float]) -> list[Result]:
    return [Result.from_dict({"variant": f"g0_v{i:03d}" if i else "g0_seed", "backend": "inductor", "device": "cpu",
                              "status": "ok", "perf": {"compiled": {"median_s": t * 1e-6}, "eager": {"median_s": 1e-5}}})
            for i, t in enumerate(times_us)]


def test_time_call_is_a_warm_median():
    x = torch.randn(64, 64)
    t = time_call(torch.mm, (x, x), budget=0.02)
    assert t["reps"] >= 7 and 0 < t["min_s"] <= t["p25_s"] <= t["median_s"] <= t["p75_s"]


def test_screen_threshold_floor_and_group_size():
    m = _manifest(5)
    # one program 10x slower than its siblings, 1 ms apart: a candidate, baseline the seed
    c = screen(m, _results([100, 105, 98, 1000, 102]))
    assert [(x["variant"], x["baseline"]) for x in c] == [("g0_v003", "g0_seed")]
    assert c[0]["ratio"] == pytest.approx(1000 / 102)
    # 2x is under the 3x threshold
    assert screen(m, _results([100, 105, 98, 200, 102])) == []
    # 10x but only 18 us apart: under the absolute floor (timer noise, launch overhead)
    assert MIN_ABS_S > 18e-6 and screen(m, _results([2, 2, 2, 20, 2])) == []
    # two programs are not siblings enough to call one slow
    assert screen(_manifest(2), _results([100, 1000])) == []
    # a slow seed: the baseline is a typical sibling instead
    c = screen(m, _results([1000, 105, 98, 100, 102]))
    assert c[0]["variant"] == "g0_seed" and c[0]["baseline"] in ("g0_v001", "g0_v003", "g0_v004")
    rows = spread(m, _results([100, 105, 98, 1000, 102]))
    assert rows[0]["programs"] == 5 and rows[0]["slowest"] == "g0_v003" and rows[0]["max_over_min"] == pytest.approx(1000 / 98, rel=1e-3)
    assert THRESHOLD == 3.0


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_bundled_example_reports_spread_without_false_alarm(eqsat, tmp_path):
    res = eqsat(REPO / "examples" / "elementwise.py", "-n", "4", "-r", TEST_MODELS / "e2e_rules", "--no-sweep",
                "--inputs", "given", "--no-minimize", "--no-artifacts", "--jobs", "1", "--perf", "--json",
                "--out", tmp_path / "out", timeout=900)
    assert res.rc == 0, res.stderr[-3000:]
    rep = res.json
    perf = rep["stats"]["perf"]
    (row,) = perf["spread"]
    assert row["programs"] == rep["variants"] + 1 >= 3
    assert 0 < row["min_us"] <= row["median_us"] <= row["max_us"] and row["max_over_min"] >= 1.0
    assert not [f for f in rep["findings"] if f["kind"] == "slow-variant"], perf
    # whatever the screen let through under load was refuted by the A/B rerun
    assert all(not s["confirmed"] for s in perf["screened"])
    raw = json.loads((tmp_path / "out" / "results.json").read_text())["raw"]
    assert all(r["perf"]["compiled"]["reps"] >= 7 for r in raw)
    print(f"compiled runtime across {row['programs']} programs: {row['min_us']}..{row['max_us']} us "
          f"(max/min {row['max_over_min']}x), timing {perf['seconds_timing']} s, confirm {perf['seconds_confirm']} s")


MODULE = '''import torch
from pathlib import Path

DEVICE = torch.device("cpu")
INPUTS_FILE = Path(__file__).with_name("g0.inputs.pt")
INPUT_NAMES = ["x"]


def forward(x):
    return ({expr},)


def index_sources(x):
    return {{}}


''' + render("variant_tail.py.j2")  # Model, get_inputs: as emitted


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_slow_equivalent_program_is_reported(eqsat, tmp_path):
    b = tmp_path / "bundle"
    b.mkdir()
    torch.save([torch.randn(256, 1024)], b / "g0.inputs.pt")
    # Equivalent row sums (up to rounding); the last sorts each row first: an O(n log n) sort kernel
    # (an aten fallback) in front of the reduction, far slower compiled than its siblings.
    programs = {"g0_seed": "x.sum(1)", "g0_v001": "torch.sum(x, 1)", "g0_v002": "x.sum(dim=1)",
                "g0_v003": "x.sort(dim=1).values.sum(1)"}
    variants = []
    for k, (vid, expr) in enumerate(programs.items()):
        (b / f"{vid}.py").write_text(MODULE.format(expr=expr))
        variants.append({"id": vid, "graph": "g0", "file": f"{vid}.py", "seed": k == 0, "mode": "seed" if k == 0 else "uniform",
                         "rules": [] if k == 0 else [f"hand_{k}"], "ops": 1, "key": vid})
    (b / "manifest.json").write_text(json.dumps({
        "format": "eqsat-bundle/1", "model": "hand-made", "rules": {"count": 0, "fired": {}},
        "graphs": [{"id": "g0", "inputs_file": "g0.inputs.pt", "input_names": ["x"], "is_param": [False],
                    "ops": 1, "op_names": ["Tensor.sum"]}], "variants": variants}))
    res = eqsat("exec", b, "--no-sweep", "--inputs", "given", "--no-minimize", "--no-artifacts", "--jobs", "1",
                "--perf", "--json", "--out", tmp_path / "out", timeout=900)
    assert res.rc == 0, res.stderr[-3000:]  # informational: never exit 1
    slow = [f for f in res.json["findings"] if f["kind"] == "slow-variant"]
    assert [f["variant"] for f in slow] == ["g0_v003"], res.json["stats"]["perf"]
    f = slow[0]
    assert f["baseline"] == "g0_seed" and f["ratio"] >= THRESHOLD and f["triage"] == "performance"
    assert f["compiled_us"] - f["baseline_us"] >= MIN_ABS_S * 1e6
    assert f["attribution"] in ("compiler", "program") and f["eager_ratio"] is not None
    d = Path(f["folder"])
    assert "sort" in (d / "variant.py").read_text() and "x.sum(1)" in (d / "baseline.py").read_text()
    meta = json.loads((d / "meta.json").read_text())
    assert meta["ratio"] == f["ratio"] and meta["kind"] == "slow-variant"
    r = warm_server().run(["perf_repro.py"], cli=False, cwd=d, timeout=600)
    assert r.returncode == 1 and "compiled ratio variant/baseline" in r.stdout, r.stdout + r.stderr[-2000:]
