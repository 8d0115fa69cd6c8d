"""End-to-end: the independent referee through the real `eqsat-test` (real torch.compile on CPU): where eager is the wrong side the finding is an `eager-bug` that names its reference and whose repro.py says so; a compiler bug stays a miscompile, the referee agreeing."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TEST_MODELS

SEEDS = TEST_MODELS / "referee"
RULES = TEST_MODELS / "e2e_rules"
CHEAP = ["-n", "2", "--jobs", "1", "--timeout", "240", "-r", str(RULES), "--no-artifacts", "--no-minimize", "--json"]
NO_SWEEP = ["--no-sweep"]
INT8_SWEEP = ["--dtypes", "int8", "--sweep-sizes", "none", "--sweep-dynamic", "none"]


def _run(eqsat, seed: str, out: Path, *extra: str) -> dict:
    res = eqsat(SEEDS / f"{seed}.py", *CHEAP, *extra, "--out", out)
    assert res.rc == 1, f"rc={res.rc}\n{res.stderr[-3000:]}"
    return json.loads(res.stdout)


@pytest.mark.parametrize("seed, judged, reference, options", [
    ("eager_pow_neg_half", "seed-miscompile", "C99 pow", NO_SWEEP),  # a disagreement where eager is wrong
    # compiled refuses what eager runs silently: reached by the int8 dtype sweep (a float model)
    ("eager_index_add_float_alpha", "compile-crash", "alpha", INT8_SWEEP),
])
def test_eager_is_the_wrong_side(eqsat, tmp_path, seed, judged, reference, options):
    report = _run(eqsat, seed, tmp_path / "out", *options)
    found = [f for f in report["findings"] if f["kind"] == "eager-bug"]
    assert found, [(f["kind"], f.get("detail")) for f in report["findings"]]
    f = found[0]
    assert f["judged_kind"] == judged and reference in f["referee_line"], f
    assert f["referee"]["wrong"] == "eager" and f["triage"] == "eager-kernel"
    assert report["stats"]["eager_bugs"] >= 1
    p = subprocess.run([sys.executable, "repro.py"], cwd=Path(f["repro"]).parent, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 1 and "VERDICT: EAGER-BUG" in p.stdout and "REFEREE:" in p.stdout, p.stdout[-2000:]


def test_a_compiler_bug_stays_a_miscompile_with_the_referee_agreeing(eqsat, tmp_path):
    report = _run(eqsat, "compiled_floor_divide", tmp_path / "out", *NO_SWEEP)
    bugs = [f for f in report["findings"] if f["kind"] in ("miscompile", "seed-miscompile")]
    assert bugs and not any(f["kind"] == "eager-bug" for f in report["findings"])
    assert bugs[0]["referee"]["wrong"] == "compiled" and "compiled is wrong" in bugs[0]["referee_line"]
