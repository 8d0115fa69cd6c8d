"""benchmarks/oracle_detection.py's --calibrate path runs: rule 1's bound as the judge builds it, one calibration program, one seed."""
from __future__ import annotations

import torch

from benchmarks import oracle_detection as od


def test_calibrate_measures_inductor_margin_against_rule_one(monkeypatch, capsys):
    programs = od.calibration_programs()
    monkeypatch.setattr(od, "calibration_programs", lambda: {"row_sums": programs["row_sums"]})
    od.calibrate(1, torch.float32)
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("row_sums"))
    alarms, margin = row.split()[1:3]
    assert alarms == "0/1" and 0 < float(margin) < 1, row
