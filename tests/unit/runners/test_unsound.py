"""The unsound-rewrite check (runners/checks/unsound.py), as the run and the sweeps both use it: a variant whose eager output differs from its seed's only in NaN/inf positions, made with rules declared ieee-edge or approximate, is expected; any other difference is a note."""
from __future__ import annotations

import torch

from eqsat_test.runners.checks.unsound import unsound_verdict

MANIFEST = {"rules": {"numerics": {"exp_of_sum_is_product": "ieee-edge", "add_commutes": "exact"}}}


def _save(path, t):
    torch.save((t,), path)
    return path


def test_nan_inf_difference_of_an_ieee_edge_rule_is_expected(tmp_path):
    seed = _save(tmp_path / "s.pt", torch.tensor([1.0, float("-inf"), 2.0]))
    var = _save(tmp_path / "v.pt", torch.tensor([1.0, float("nan"), 2.0]))
    assert unsound_verdict(seed, var, {"rules": ["exp_of_sum_is_product"]}, MANIFEST) is None
    v = unsound_verdict(seed, var, {"rules": ["add_commutes"]}, MANIFEST)
    assert v is not None and "NaN/Inf positions" in v.detail


def test_a_numeric_difference_is_a_note_whatever_the_rules_declare(tmp_path):
    seed = _save(tmp_path / "s.pt", torch.tensor([1.0, 2.0, 3.0]))
    var = _save(tmp_path / "v.pt", torch.tensor([1.0, 2.5, 3.0]))
    assert unsound_verdict(seed, var, {"rules": ["exp_of_sum_is_product"]}, MANIFEST) is not None
    assert unsound_verdict(seed, seed, {"rules": ["add_commutes"]}, MANIFEST) is None
    assert unsound_verdict(seed, tmp_path / "missing.pt", {"rules": []}, MANIFEST) is None
