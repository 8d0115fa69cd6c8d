"""End-to-end training mode (`--grad`): the real command line, real torch.compile on CPU.

A clean model gives no candidate (Inductor and the AOTAutograd identity); a backward-only fault (forward
exact, one gradient wrong) is found as a grad-miscompile with a repro.py that reproduces it alone and
prints the differing gradient elements; a rule whose gradient differs at a tie is not blamed on the compiler.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
from conftest import REPO, TEST_MODELS

from eqsat_test.runners.protocol import load_tensors
from eqsat_test.runners.records import COMPILER_BUG_KINDS

FAULTS = REPO / "examples" / "backends" / "grad_faulty_backends.py"
CHEAP = ["--grad", "-n", "3", "--jobs", "1", "--timeout", "240", "--no-sweep", "--no-artifacts", "--json",
         "-r", str(TEST_MODELS / "e2e_rules")]


def _bugs(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["kind"] in COMPILER_BUG_KINDS]


def _explain(res) -> str:
    return f"rc={res.rc}\nstdout: {res.stdout[-3000:]}\nstderr: {res.stderr[-3000:]}"


def test_clean_model_has_no_candidates(eqsat, tmp_path):
    res = eqsat(TEST_MODELS / "relu_mlp.py", *CHEAP, "-b", "inductor", "-b", "aot_eager", "--out", tmp_path / "out")
    assert res.rc == 0, _explain(res)
    report = res.json
    assert report["stats"]["grad"] is True and _bugs(report) == []
    raw = __import__("json").loads((tmp_path / "out" / "results.json").read_text())["raw"]
    judged = [s for r in raw for s in r["input_sets"]]
    assert judged and all(r.get("training") is not None for r in raw)
    assert all("leaves agree" in s["detail"] for s in judged if s["ok"])  # outputs and gradients judged


def test_backward_only_fault_is_a_grad_miscompile(eqsat, tmp_path):
    out = tmp_path / "out"
    res = eqsat(TEST_MODELS / "relu_mlp.py", *CHEAP, "-b", f"{FAULTS}:grad_scaled", "--out", out)
    assert res.rc == 1, _explain(res)
    bugs = _bugs(res.json)
    assert bugs and {f["kind"] for f in bugs} == {"grad-miscompile"}, bugs
    f = bugs[0]
    assert f["grad_input"] and f["detail"].startswith(f"gradient of {f['grad_input']}")
    assert f["grad_stage"] == "backend" and f["triage_info"]["stage"] == "backward"
    assert f.get("confirmed") is not False
    p = subprocess.run([sys.executable, "repro.py"], cwd=Path(f["repro"]).parent, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "differs at gradient of" in p.stdout and "VERDICT: MISCOMPILE (the gradients" in p.stdout
    assert "stage: the backend's own compilers" in p.stdout


def test_rule_whose_gradient_differs_at_a_tie_is_not_blamed(eqsat, tmp_path):
    """relu -> clamp(min=0) at inputs with exact zeros: the variant's eager gradient differs from its seed's
    (the rule's declared edge class), eager and compiled of each program agree: no candidate, no note."""
    out = tmp_path / "out"
    res = eqsat(TEST_MODELS / "grad_ties.py", "--grad", "-n", "2", "--jobs", "1", "--timeout", "240", "--no-sweep",
                "--no-artifacts", "--json", "-r", str(TEST_MODELS / "grad_rules"), "--inputs", "given",
                "--out", out)
    assert res.rc == 0, _explain(res)
    report = res.json
    assert report["variants"] >= 1 and _bugs(report) == []
    assert not [n for n in report["findings"] if n["kind"] == "unsound-rewrite"], report["findings"]
    seed = load_tensors(out / "scratch" / "eager" / "g0_seed__cpu" / "given.pt")
    variant = load_tensors(out / "scratch" / "eager" / "g0_v001__cpu" / "given.pt")
    assert torch.equal(seed[0][0], variant[0][0])  # the same outputs
    x_grad = [k for k, g in enumerate(seed[1]) if g is not None and g.shape == (8, 16)][0]
    assert not torch.equal(seed[1][x_grad], variant[1][x_grad])  # another gradient at the ties
