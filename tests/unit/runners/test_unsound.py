"""The unsound-rewrite check (runners/checks/unsound.py), as the run and the sweeps both use it: a variant whose eager output differs from its seed's only in NaN/inf positions, made with rules declared ieee-edge or approximate, is expected; any other difference is a note."""
from __future__ import annotations

import torch

from eqsat_test.lowering.manifest import Manifest, ManifestRules, Variant
from eqsat_test.runners.checks.unsound import unsound_verdict

MANIFEST = Manifest(rules=ManifestRules(numerics={"exp_of_sum_is_product": "ieee-edge", "add_commutes": "exact"}))


def _v(*rules: str) -> Variant:
    return Variant("g0_v001", "g0", "g0_v001.py", rules=rules)


def _save(path, t):
    torch.save((t,), path)
    return path


def test_nan_inf_difference_of_an_ieee_edge_rule_is_expected(tmp_path):
    seed = _save(tmp_path / "s.pt", torch.tensor([1.0, float("-inf"), 2.0]))
    var = _save(tmp_path / "v.pt", torch.tensor([1.0, float("nan"), 2.0]))
    assert unsound_verdict(seed, var, _v("exp_of_sum_is_product"), MANIFEST) is None
    v = unsound_verdict(seed, var, _v("add_commutes"), MANIFEST)
    assert v is not None and "NaN/Inf positions" in v.detail


def test_a_numeric_difference_is_a_note_whatever_the_rules_declare(tmp_path):
    seed = _save(tmp_path / "s.pt", torch.tensor([1.0, 2.0, 3.0]))
    var = _save(tmp_path / "v.pt", torch.tensor([1.0, 2.5, 3.0]))
    assert unsound_verdict(seed, var, _v("exp_of_sum_is_product"), MANIFEST) is not None
    assert unsound_verdict(seed, seed, _v("add_commutes"), MANIFEST) is None
    assert unsound_verdict(seed, tmp_path / "missing.pt", _v(), MANIFEST) is None


APPROX = Manifest(rules=ManifestRules(numerics={"add_associates": "approximate", "add_commutes": "exact"}))


def test_reassociation_at_a_large_scale_is_the_declared_behaviour_of_an_approximate_rule(tmp_path):
    # (a + b) + c against a + (b + c) with a = 1e10, b = -1e10, c = 3: 3.0 against 0.0, in a leaf whose
    # largest value is of magnitude 1e10 (logits): a difference of far less than a rounding of 1e10
    small = [1.0, 2.0, 1.5, -2.0, 0.5, 4.0]
    seed = _save(tmp_path / "s.pt", torch.tensor([1e10, 3.0, *small]))
    var = _save(tmp_path / "v.pt", torch.tensor([1e10, 0.0, *small]))
    assert unsound_verdict(seed, var, _v("add_associates"), APPROX) is None
    v = unsound_verdict(seed, var, _v("add_commutes"), APPROX)  # an exact rule: a note
    assert v is not None and not v.ok
    # beyond the scale: a real difference is a note whatever the rules declare
    far = _save(tmp_path / "far.pt", torch.tensor([1e10, 3.0e6, *small]))
    assert unsound_verdict(seed, far, _v("add_associates"), APPROX) is not None


def test_cancellation_to_a_small_output_is_judged_with_the_seeds_fp64_error(tmp_path):
    # a normalization of large values: the outputs are O(1), their rounding error that of the inputs' 1e8
    f64 = torch.tensor([0.3, -1.2, 0.9, 0.0], dtype=torch.float64)
    seed_t = (f64 + torch.tensor([3e-3, -2e-3, 1e-3, 2e-3], dtype=torch.float64)).float()  # the seed's own error
    var_t = (f64 + torch.tensor([-2e-3, 3e-3, -3e-3, 1e-3], dtype=torch.float64)).float()
    seed = _save(tmp_path / "s.pt", seed_t)
    var = _save(tmp_path / "v.pt", var_t)
    assert unsound_verdict(seed, var, _v("add_associates"), APPROX) is not None  # no fp64: no yardstick
    torch.save((f64,), tmp_path / "s.fp64.pt")
    assert unsound_verdict(seed, var, _v("add_associates"), APPROX) is None
    assert unsound_verdict(seed, var, _v("add_commutes"), APPROX) is not None
