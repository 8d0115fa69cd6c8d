"""Tests for rewrite/provenance.py: variants are credited with the rules whose firings built them, and only those."""
import textwrap

import torch

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.manifest import Manifest
from eqsat_test.rewrite.compile_rules import compile_rules
from eqsat_test.rewrite.extract import extract_variants, read_egraph
from eqsat_test.rewrite.generate import GenerateOptions, generate
from eqsat_test.rewrite.provenance import FreezeOnce, read_credit
from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule
from eqsat_test.rewrite.saturate import saturate


@rule(family="spelling", numerics="exact")
def relu_to_method(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), x.relu()


@rule(family="layout", numerics="exact")
def double_t(x: Tensor(rank=2)):
    return x.t().t(), x


@rule(family="activation", numerics="exact")
def relu_twice(x: Tensor(dtype=FLOATING)):
    return torch.relu(torch.relu(x)), torch.relu(x)


@rule(family="algebra", numerics="approximate")
def sin_doubled(x: Tensor(dtype=FLOATING)):
    """Never fires on the models below (no sin)."""
    return torch.sin(x) * 2, torch.sin(x) + torch.sin(x)


@rule(family="algebra", numerics="exact")
def exp_spelling(x: Tensor(dtype=FLOATING)):
    """Never fires on the models below (no exp)."""
    return torch.exp(x), x.exp()


def _variants(model, inputs, rules, n=24):
    compiled, errors = compile_rules(rules, use_cache=False)
    assert not errors
    g = capture(model, inputs)[0]
    prog = lift_fx(g.gm).program
    sat = saturate(prog, compiled)
    eg = FreezeOnce(sat.lifted.egraph)
    ec = read_egraph(eg, sat.lifted.root, prog, sat.lifted.node_names)
    credit = read_credit(eg.freeze(), eg, {r.name: r.numerics for r in rules})
    del eg, sat.lifted.egraph
    credit.set_seed(prog)
    ex = extract_variants(ec, n, exclude={prog.key()})
    return sat, [(p, credit.rules_of(p)) for p, _ in ex.variants]


class OneRelu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1


def test_the_only_rule_that_can_fire_is_credited_and_idle_rules_never_are():
    sat, variants = _variants(OneRelu(), (torch.randn(3, 4),), [relu_to_method, sin_doubled, exp_spelling])
    assert set(sat.fired) == {"relu_to_method"}  # rule names only, no egglog text
    assert variants
    for _, rules in variants:
        assert rules == ["relu_to_method"]


class Chain(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.relu(x.t().t())) + 1


def _ops(p):
    return [n.name for n in p.nodes if n.kind == "call"]


def test_removal_rules_are_credited_from_what_they_matched():
    sat, variants = _variants(Chain(), (torch.randn(3, 4),), [double_t, relu_twice, sin_doubled])
    assert set(sat.fired) == {"double_t", "relu_twice"}
    assert variants
    for p, rules in variants:
        ops = _ops(p)
        assert "sin_doubled" not in rules
        assert rules, ops  # every variant differs from the seed: some rule is credited
        if "Tensor.t" not in ops:  # x.t().t() dropped
            assert "double_t" in rules, ops
        if ops.count("torch.relu") == 1:  # one relu fewer
            assert "relu_twice" in rules, ops
        assert set(rules) <= {"double_t", "relu_twice"}


def test_generate_records_rules_and_their_classes_non_exact_first(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import torch
        class Model(torch.nn.Module):
            def forward(self, x, y):
                return torch.relu(x * y) + torch.cos(x)
        def get_inputs():
            return [torch.randn(4, 5), torch.randn(4, 5)]
    """))
    rules_dir = tmp_path / "rules"
    rules_dir.mkdir()
    (rules_dir / "few.py").write_text(textwrap.dedent('''
        """A few rules for the provenance test."""
        import torch
        from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule

        @rule(family="spelling", numerics="exact")
        def relu_method(x: Tensor(dtype=FLOATING)):
            return torch.relu(x), x.relu()

        @rule(family="algebra", numerics="approximate")
        def cos_as_sin_shift(x: Tensor(dtype=FLOATING)):
            return torch.cos(x), torch.sin(x + 1.5707963267948966)

        @rule(family="algebra", numerics="exact")
        def never_here(x: Tensor(dtype=FLOATING)):
            return torch.tanh(x), x.tanh()
    '''))
    m = generate(tmp_path / "model.py", tmp_path / "out", GenerateOptions(variants=8, rules=(str(rules_dir),)))
    assert set(m.rules.fired) == {"relu_method", "cos_as_sin_shift"}
    variants = [v for v in m.variants if not v.seed]
    assert variants
    for v in variants:
        assert v.rules and "never_here" not in v.rules
        assert v.rule_numerics is not None and tuple(v.rule_numerics) == v.rules
        classes = [v.rule_numerics[r] for r in v.rules]
        assert classes == sorted(classes, key=["approximate", "ieee-edge", "exact"].index)
    both = [v for v in variants if set(v.rules) == {"relu_method", "cos_as_sin_shift"}]
    assert both and all(v.rules[0] == "cos_as_sin_shift" for v in both)
    assert Manifest.from_json((tmp_path / "out" / "manifest.json").read_text()) == m


@rule(family="stress", numerics="exact")
def relu_operand_round_trip(x: Tensor(dtype="float32")):
    return torch.relu(x), torch.relu(x.to(torch.float64).to(torch.float32))


def test_a_new_operand_merged_into_the_seeds_class_credits_the_merge():
    """A new user's model (a ConvNeXt block): a variant `relu(x.double().float())` was credited to the renaming rules
    alone (`x.to(float64)` -> `x.double()`), so its dtypes were theirs (every dtype) and the float16
    sweep ran a float32-only round trip (an unsound-rewrite note). The renamed round trip is in x's
    e-class through `x.double().float() -> x` (float32 only): that merge is credited now."""
    from eqsat_test.rules.dtype_logic import double_is_to_float64, float32_via_float64_round_trip, float_is_to_float32
    rules = [relu_operand_round_trip, double_is_to_float64, float_is_to_float32, float32_via_float64_round_trip]
    _, variants = _variants(OneRelu(), (torch.randn(3, 4),), rules, n=40)
    float32_only = {"relu_operand_round_trip", "float32_via_float64_round_trip"}
    renamed = [(p, r) for p, r in variants if "Tensor.double" in _ops(p) and "Tensor.to" not in _ops(p)]
    assert renamed, [_ops(p) for p, _ in variants]
    for p, credited in variants:
        assert set(credited) & float32_only, (_ops(p), credited)
