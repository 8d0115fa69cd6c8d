"""Findings point at the bug ledger (docs/bugs/ledger.toml): matched by op, device, sweep dtype and input set; the report shows the match as a link. No torch.compile."""
from __future__ import annotations

import json
from pathlib import Path

from eqsat_test.runners.campaign.report import build_view, collect, render_html
from eqsat_test.runners.findings.ledger import ledger_matches, load_ledger


def _ids(f: dict, entries) -> list[int]:
    return [e.id for e in ledger_matches(f, entries)]


def test_load_ledger_from_the_repo_and_missing_file(tmp_path):
    entries = load_ledger()
    assert [e.id for e in entries] == list(range(1, len(entries) + 1)) and len(entries) >= 11
    assert all(e.repro_path.is_file() and e.ledger_md.is_file() for e in entries)
    assert load_ledger(tmp_path) == [] and load_ledger(tmp_path / "nope.toml") == []  # an installed copy
    assert _ids({"kind": "miscompile", "device": "cpu", "min_ops": ["torch.expm1"]}, []) == []


def test_expm1_matches_6_on_cpu_only():
    entries = load_ledger()
    f = {"kind": "miscompile", "backend": "inductor", "device": "cpu", "min_ops": ["torch.expm1"],
         "ops": ["torch.exp", "operator.truediv"], "input_set": "given"}
    assert _ids(f, entries) == [6]
    assert _ids({**f, "device": "cuda"}, entries) == [26]  # not #6 (the C++ backend's): Triton's flushing expm1
    assert _ids({**f, "min_ops": None, "ops": ["torch.nn.functional.elu", "operator.add"]}, entries) == [6]
    assert _ids({**f, "kind": "unsound-rewrite"}, entries) == []  # notes are no compiler bugs
    assert _ids({**f, "min_ops": ["torch.exp"]}, entries) == []  # min_ops wins over the graph's ops
    assert _ids({**f, "device": "cpu/cuda", "kind": "device-mismatch"}, entries) == [6, 26]  # either side may be the one


def test_argmax_int8_matches_4_float32_does_not():
    entries = load_ledger()
    f = {"kind": "miscompile", "backend": "inductor", "device": "cuda", "ops": ["torch.argmax"],
         "sweep": "dtype=int8", "sweep_key": "dtype=int8", "input_set": "random-0"}
    assert _ids(f, entries) == [4]
    assert _ids({**f, "sweep_key": "dynamic,dtype=uint8,sizes", "sweep": "x"}, entries) == [4]
    assert _ids({**f, "sweep": "dtype=float32", "sweep_key": "dtype=float32"}, entries) == []
    no_sweep = {k: v for k, v in f.items() if k not in ("sweep", "sweep_key")}
    assert _ids(no_sweep, entries) == []
    assert _ids({**f, "device": "cpu"}, entries) == []


def test_input_set_and_all_ops_required():
    entries = load_ledger()
    nan = {"kind": "seed-miscompile", "device": "cuda", "min_ops": ["torch.bucketize"], "input_set": "special-0"}
    assert _ids(nan, entries) == [11]
    assert _ids({**nan, "input_set": "given"}, entries) == []
    mul0 = {"kind": "miscompile", "device": "cpu", "min_ops": ["operator.mul_by_zero", "torch.where", "operator.gt"],
            "input_set": "special-1"}
    assert _ids(mul0, entries) == [3]
    assert _ids({**mul0, "min_ops": ["torch.mul_by_zero"]}, entries) == [3]  # x * 0 alone, as a rewrite reaches it
    assert _ids({**mul0, "input_set": "given"}, entries) == []
    assert _ids({**mul0, "min_ops": ["operator.mul", "operator.floordiv"]}, entries) == [7]  # a plain mul: not #3


def _run_folder(root: Path, findings: list[dict]) -> Path:
    rd = root / "run"
    (rd / "bundle").mkdir(parents=True)
    (rd / "bundle" / "manifest.json").write_text(json.dumps({"model": "/models/ssm.py", "seed": 0}))
    (rd / "report.json").write_text(json.dumps({"model": "/models/ssm.py", "variants": 2, "executed": 3,
                                                "torch_version": "2.x", "findings": findings,
                                                "stats": {"backends": ["inductor"], "devices": ["cpu"]}}))
    return rd


def test_report_links_a_matching_finding_to_its_ledger_entry(tmp_path):
    bug = {"kind": "seed-miscompile", "backend": "inductor", "device": "cpu", "ops": ["torch.expm1", "operator.mul"],
           "min_ops": ["torch.expm1"], "rules": [], "variant": "g0_seed", "input_set": "given",
           "detail": "[0] float32[16]: 4 of 16 elements differ"}
    other = {"kind": "miscompile", "backend": "inductor", "device": "cpu", "ops": ["torch.relu"], "rules": ["r"],
             "variant": "g0_v001", "input_set": "given", "detail": "relu"}
    rd = _run_folder(tmp_path, [bug, other])
    data = collect(rd)
    by_kind = {g["kind"]: g for g in data["groups"]}
    assert by_kind["seed-miscompile"]["ledger"] == [6] and by_kind["miscompile"]["ledger"] == []
    assert data["ledger"][6]["title"].startswith("vectorized expm1")
    out = tmp_path / "report.html"
    view = build_view(data, out)
    cards = {c["kind"]: c for c in view["cards"]}
    assert [x["id"] for x in cards["seed-miscompile"]["ledger"]] == [6] and cards["miscompile"]["ledger"] == []
    html = render_html(view)
    md = cards["seed-miscompile"]["ledger"][0]["md"]
    assert md.endswith("docs/bugs.md") and (out.parent / md).resolve().is_file()  # a relative link that resolves
    assert f'<a href="{md}">ledger #6: vectorized expm1' in html
    assert "expm1_vectorized_exp_minus_one.py" in html and "known root cause?" in html
    assert html.count("known root cause?") == 1  # the relu finding has none


def test_a_models_own_input_dtypes_stand_for_a_sweeps():
    """A uint8 model's own reduction (no sweep) is ledger #5; a float32 model's is not; a sweep's dtype wins."""
    entries = load_ledger()
    f = {"kind": "seed-miscompile", "backend": "inductor", "device": "cpu", "min_ops": ["torch.amin"],
         "input_set": "given", "input_dtypes": ["uint8"]}
    assert _ids(f, entries) == [5]
    assert _ids({**f, "input_dtypes": ["float32"]}, entries) == []
    assert _ids({**f, "sweep_key": "dtype=float16", "sweep": "dtype=float16"}, entries) == []


def test_a_crash_matches_crash_entries_only():
    """A compile crash in a program that holds softmax, mul and int64 inputs is no instance of the integer softmax
    miscompile (ledger #21), and a miscompile with a causal mask's ops is no instance of the bounds-analysis crash
    (#15): the entry's symptom must be the finding's."""
    entries = load_ledger()
    crash = {"kind": "compile-crash", "device": "cpu", "ops": ["torch.softmax", "operator.mul", "torch.arange"],
             "input_dtypes": ["float32", "int64"]}
    assert 21 not in _ids(crash, entries)
    assert 21 in _ids({**crash, "kind": "miscompile"}, entries)
    mask = {"kind": "compile-crash", "device": "cpu", "min_ops": ["torch.arange", "operator.le", "operator.ne"]}
    assert _ids(mask, entries) == [15] and 15 not in _ids({**mask, "kind": "miscompile"}, entries)
    assert 23 in _ids({**mask, "min_ops": ["torch.arange", "operator.le", "torch.logical_xor", "Tensor.where"]},
                      entries)


def test_wrong_values_match_entries_of_the_side_they_convict():
    """#16 is eager's index_add (a float alpha truncated): a compiled index_add that is wrong is another bug; #1 is
    eager's pow: an eager-bug of pow matches it, a miscompile of pow does not."""
    entries = load_ledger()
    wrong_compiled = {"kind": "seed-miscompile", "device": "cpu", "min_ops": ["Tensor.index_add", "torch.arange"],
                      "input_set": "given"}
    assert 16 not in _ids(wrong_compiled, entries)
    assert 16 in _ids({**wrong_compiled, "kind": "eager-bug"}, entries)
    pow_special = {"kind": "eager-bug", "device": "cpu", "min_ops": ["operator.pow"], "input_set": "special-0"}
    assert 1 in _ids(pow_special, entries) and 1 not in _ids({**pow_special, "kind": "miscompile"}, entries)
    assert 8 in _ids({"kind": "miscompile", "device": "cpu", "min_ops": ["torch.remainder"]}, entries)
