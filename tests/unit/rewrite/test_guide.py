"""Coverage-guided extraction (rewrite/guide.py, extract.mutant): feedback, mutants, the campaign memory."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.rewrite.extract import base_classes, mutant
from eqsat_test.rewrite.generate import GenerateOptions, generate
from eqsat_test.rewrite.guide import Guide, RuleMemory, Tally
from eqsat_test.rewrite.saturate import Budget

MODELS = Path(__file__).resolve().parents[2] / "models"
TINY = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x * 2.0).sum(-1)


def get_inputs():
    return [torch.randn(4, 8)]
"""


def _guided(tmp_path, model: Path, variants: int = 12, rules=()):
    keep: list = []
    manifest = generate(model, tmp_path / "bundle", GenerateOptions(
        variants=variants, modes=("guided",), rules=tuple(rules), budget=Budget(iterations=4, seconds=300)), keep=keep)
    return keep, manifest, Guide(keep, manifest, tmp_path / "bundle")


def test_rule_memory_round_trips_and_adds_a_run(tmp_path):
    t = Tally()
    t.add("r1", 10.0)
    t.add("r1", 2.0)
    t.add("r2", 0.0)
    mem = RuleMemory({"r1": (3, 30.0)}).merged(t)
    assert mem.rules == {"r1": (5, 42.0), "r2": (1, 0.0)}
    mem.save(tmp_path / "m.json")
    assert RuleMemory.load(tmp_path / "m.json") == mem
    assert RuleMemory.load(tmp_path / "missing.json") == RuleMemory()


def test_guided_generation_writes_a_first_round_and_the_guide_draws_the_rest(tmp_path):
    model = tmp_path / "tiny.py"
    model.write_text(TINY)
    keep, manifest, guide = _guided(tmp_path, model, variants=12)
    first = [v for v in manifest.variants if not v.seed]
    assert len(first) == 4 and keep[0].budget == 12
    v1 = first[0].id
    guide.feedback(v1, {("_inductor/ir.py", 1), ("_inductor/ir.py", 2)})  # before its seed: waits
    assert guide.gains == [] and guide.pending
    guide.feedback("g0_seed", {("_inductor/ir.py", 1)})
    assert guide.gains == [1.0] and not guide.pending  # over the seed's lines
    assert all(guide.rules.tried.get(r) == 1 for r in first[0].rules)
    assert len(guide.corpus["g0"]) == 2  # the seed, and v1 as a base for mutants
    drawn = guide.more(8)
    assert len(drawn) == 8 and keep[0].count == 12 and guide.more(1) == []
    assert {v.mode for v in drawn} <= {"guided-mutant", "guided-uniform", "guided-near-original"}
    keys = [v.key for v in guide.manifest.variants]
    assert len(keys) == len(set(keys)) == 13  # distinct, the seed's included
    assert all((tmp_path / "bundle" / v.file).is_file() for v in drawn)
    # the rounds made new manifests: generation's is as it was; the bundle's has every variant drawn
    assert len(manifest.variants) == 5 and guide.manifest.variants[:5] == manifest.variants
    on_disk = Manifest.from_json((tmp_path / "bundle" / "manifest.json").read_text())
    assert on_disk == guide.manifest
    found = [g.extraction.distinct for m in (manifest, on_disk) for g in m.graphs if g.extraction is not None]
    assert found[1] == found[0] + 8


def test_a_mutant_switches_the_site_and_keeps_the_base_elsewhere(tmp_path):
    import random
    model = tmp_path / "tiny.py"
    model.write_text(TINY)
    keep, _, _ = _guided(tmp_path, model)
    ec = keep[0].ec
    base = dict(ec.original)
    tried = 0
    for c in base_classes(ec, base):
        for i in range(len(ec.classes[c])):
            if i == base.get(c) or tried >= 12:
                continue
            got = mutant(ec, base, {c: i}, random.Random(0))
            if got is None:
                continue
            tried += 1
            p, changed = got
            on_seed = {(c2, i2) for c2, i2 in changed if c2 in ec.original}
            assert on_seed <= {(c, i)}, (c, i, on_seed)
    assert tried >= 5


@pytest.mark.slow  # saturation with the whole library, and an Inductor compile per variant drawn
def test_a_cast_first_softmax_seed_gets_a_variant_that_builds_the_int_softmax_pattern(tmp_path):
    """The seed `softmax(x.float() / T)` (int8 x) compiles correctly: the pattern's input is float32. Guided
    mutants of it, with the whole library, include `softmax(x / T)`, which builds joint_graph's
    div_softmax_pattern on the int8 input (the live bug: x - amax(x) wraps in int8)."""
    from eqsat_test.rewrite.patternreach import reach

    keep, manifest, guide = _guided(tmp_path, MODELS / "int_softmax_cast_first.py", variants=40)
    guide.seeds_in.add("g0")

    def patterns(v):
        spec = importlib.util.spec_from_file_location("v", tmp_path / "bundle" / v.file)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return reach(mod.forward, mod.get_inputs()).patterns

    seed = next(v for v in manifest.variants if v.seed)
    assert "joint_graph.div_softmax_pattern(inp=float32)" in patterns(seed)
    found = None
    for _ in range(30):
        (v,) = guide.more(1)
        if "joint_graph.div_softmax_pattern(inp=int8)" in patterns(v):
            found = v
            break
    assert found is not None and "int_div_casts_first" in found.rules


TWO_GRAPHS = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        a = torch.relu(x * 2.0)
        torch._dynamo.graph_break()
        return a.sum(-1) + torch.tanh(y).mean()


def get_inputs():
    return [torch.randn(4, 8), torch.randn(3, 5)]
"""


def test_a_later_round_writes_each_graph_against_its_own_inputs(tmp_path):
    """Guided rounds write variants after generate() returns: each graph's variants load that graph's inputs."""
    model = tmp_path / "two.py"
    model.write_text(TWO_GRAPHS)
    keep, manifest, _ = _guided(tmp_path, model, variants=4)
    assert len(keep) >= 2, [g.skipped_rewrites for g in manifest.graphs]
    for state in keep:
        entry = state.add(state.seed, "guided")
        text = (tmp_path / "bundle" / entry.file).read_text()
        assert f"{state.gid}.inputs.pt" in text
        others = [s.gid for s in keep if s.gid != state.gid]
        assert not any(f"{g}.inputs.pt" in text for g in others), (state.gid, others)
