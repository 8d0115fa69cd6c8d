"""What a user sees: progress without a terminal, the console summary, repro.py's differing positions, and tensors-only reads."""
from __future__ import annotations

import io
import pickle
import sys
import time

import pytest
import torch

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.manifest import Extraction, Graph, Manifest, ManifestRules, Saturation
from eqsat_test.runners.cli.summary import summary as _summary
from eqsat_test.runners.exec.progress import Progress
from eqsat_test.runners.protocol import load_tensors


def test_progress_prints_plain_lines_without_a_terminal(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    p = Progress(3, enabled=True)
    p.PLAIN_EVERY = 0.0
    for _ in range(3):
        p.update({"status": "ok"}, 0)
    p.close()
    lines = err.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("eqsat-test: 3/3 tasks done, 0 suspicious")


def test_progress_prints_a_line_while_no_task_finishes(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(Progress, "PLAIN_EVERY", 0.2)
    p = Progress(2, enabled=True)
    time.sleep(0.7)  # the first compiles: no result yet
    p.close()
    lines = err.getvalue().splitlines()
    assert lines and all(ln.startswith("eqsat-test: 0/2 tasks done, 0 suspicious") for ln in lines), lines


def _report(detail: str) -> tuple[dict, Manifest]:
    manifest = Manifest(graphs=(Graph("g0", ops=5, saturation=Saturation(8, 40, "iterations", "stopped: iteration budget", 0.1),
                                      extraction=Extraction(12, 40, 3.0, 4, 0)),),
                        rules=ManifestRules(count=10, fired={"r1": 2}))
    report = {"model": "m.py", "torch_version": "2.x", "executed": 2, "variants": 1,
              "findings": [{"kind": "miscompile", "variant": "g0_v001", "backend": "inductor", "device": "cpu",
                            "rules": ["relu_is_where"], "max_abs_err": float("inf"), "detail": detail,
                            "repro": "/o/findings/001/repro.py"},
                           {"kind": "unsound-rewrite", "variant": "g0_v002", "rules": ["bad_rule"], "detail": "x"}],
              "stats": {"backends": ["inductor"], "devices": ["cpu"], "input_kinds": ["given"], "wall_seconds": 3.0,
                        "confirm": {"checked": 1}}}
    return report, manifest


def test_summary_says_what_happened_and_what_to_do_next(tmp_path):
    detail = "NaN/Inf positions differ at 2 of 128 elements " + "word " * 80
    report, manifest = _report(detail)
    text = _summary(report, manifest, tmp_path)
    assert "(stopped: iteration budget)" in text
    assert "WARNING: g0 got 0 distinct variants" in text
    assert "FOUND 1 compiler-bug candidate(s) (each confirmed alone from its repro.py) in 1 distinct root cause(s)" in text
    assert "next: python /o/findings/001/repro.py" in text
    # the summary ends with the table: one line per root cause with its repro, one per note group
    table = text.splitlines()[text.splitlines().index("  root causes (compiler bugs): 1 distinct; "
                                                       "exposed only by rewrites: 1 of 1"):]
    assert len(table) == 4, table
    assert table[1].startswith("     1. [miscompile]") and "NaN/inf" in table[1]
    assert "exposed only by rewrites (relu_is_where)" in table[1] and table[1].endswith("repro: /o/findings/001/repro.py")
    assert table[2] == "  notes (not compiler bugs), by kind: unsound-rewrite 1 in 1 cause(s)"
    assert table[3].startswith("    - [unsound-rewrite] rule bad_rule: 1 note(s) in 1 program(s)")


def test_repro_prints_the_positions_that_differ_with_fp64():
    src = render("repro_main.py.j2", kind="miscompile", backend_label="inductor", backend_expr='"inductor"', backend_prelude="", options={}, device="cpu", rules=[],
                 inductor_config={}, context_lines=[], extreme_inputs=False)
    ns: dict = {"torch": torch}
    exec(compile("import torch\n" + src.split("def main():")[0], "repro", "exec"), ns)
    eager = torch.tensor([1.0, 2.0, 3.0, float("nan")])
    compiled = torch.tensor([1.0, 2.5, 3.0, 0.0])
    lines = ns["_differences"](eager, compiled, eager.double())
    assert lines[0].startswith("output[3]: eager nan, compiled 0, fp64 nan")
    assert lines[1].startswith("output[1]: eager 2, compiled 2.5, fp64 2")


class _Evil:
    def __reduce__(self):
        return (print, ("pickled code ran",))


def test_worker_outputs_are_read_back_as_tensors_only(tmp_path):
    ok = tmp_path / "ok.pt"
    torch.save([torch.ones(2), (torch.zeros(1), 3)], ok)
    assert torch.equal(load_tensors(ok)[0], torch.ones(2))
    bad = tmp_path / "bad.pt"
    with open(bad, "wb") as fh:
        pickle.dump([_Evil()], fh)
    with pytest.raises(pickle.UnpicklingError):
        load_tensors(bad)
