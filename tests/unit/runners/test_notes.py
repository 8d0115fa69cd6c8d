"""Notes aggregated (runners/findings/notes.py): one group per (model, kind, cause) with counts and examples; nondeterministic notes by op, unsound-rewrite notes by the rule to blame (loud for an exact rule); the record's JSON round trip and the merge over runs."""
from __future__ import annotations

import json

from eqsat_test.runners.findings.notes import (
    NoteGroup,
    aggregate_notes,
    blame,
    merge_note_groups,
    nondeterministic_op,
    report_note_groups,
)
from eqsat_test.runners.findings.table import root_cause_table

MODEL = "models/convt.py"


def _n(kind, variant, *, rules=(), ops=("torch.conv_transpose2d", "torch.relu"), detail="d", input_set="given",
       device="cuda", **extra):
    return {"kind": kind, "variant": variant, "graph": "g0", "backend": "inductor", "device": device,
            "rules": list(rules), "ops": list(ops), "input_set": input_set, "detail": detail, **extra}


def test_one_nondeterministic_note_per_model_and_op():
    notes = [_n("nondeterministic", f"g0_v{k:03d}", detail=f"nondeterministic, not judged: run {k}") for k in range(31)]
    groups = aggregate_notes(notes, MODEL)
    assert len(groups) == 1
    g = groups[0]
    assert (g.kind, g.cause, g.count, len(g.variants)) == ("nondeterministic", "conv_transpose2d", 31, 31)
    assert len(g.examples) == 3 and g.devices == ("cuda",)
    # a random op is named before an atomic one; an unknown one names the graph
    assert nondeterministic_op(["torch.nn.functional.dropout", "Tensor.index_add_"]) == "dropout"
    assert nondeterministic_op(["ConvTranspose2d"]) == "conv_transpose2d"
    assert nondeterministic_op(["torch._C._nn.scaled_dot_product_attention"]) == "scaled_dot_product_attention"
    assert aggregate_notes([_n("nondeterministic", "g0_v001", ops=["torch.sin"])], MODEL)[0].cause == "an op of graph g0"


def test_unsound_rewrite_notes_group_by_the_rule_to_blame():
    # every variant built with add_associates differs from its seed; the other rules also built sound variants
    variant_rules = {"g0_seed": [], "g0_v001": ["add_associates", "mul_commutes"], "g0_v002": ["add_associates"],
                     "g0_v003": ["mul_commutes"], "g0_v004": ["add_associates", "relu_spelling"],
                     "g0_v005": ["relu_spelling"], "g0_v006": ["pow_two_is_square"]}
    notes = [_n("unsound-rewrite", v, rules=variant_rules[v], input_set=s, device=d)
             for v, s, d in (("g0_v001", "random-0", "cpu"), ("g0_v002", "given", "cpu"), ("g0_v004", "given", "cuda"),
                             ("g0_v006", "special-0", "cpu"))]
    assert blame(notes, variant_rules)["g0_v001"] == "add_associates"
    numerics = {"add_associates": "approximate", "pow_two_is_square": "exact", "mul_commutes": "exact",
                "relu_spelling": "exact"}
    groups = aggregate_notes(notes, MODEL, variant_rules=variant_rules, numerics=numerics,
                             paths={v: f"/b/{v}.py" for v in variant_rules})
    assert [(g.cause, g.count, g.loud) for g in groups] == [("pow_two_is_square", 1, True),
                                                            ("add_associates", 3, False)]
    g = groups[1]
    assert g.variants == ("g0_v001", "g0_v002", "g0_v004") and g.input_sets == ("random-0", "given")
    assert g.devices == ("cpu", "cuda") and g.numerics == "approximate" and g.path == "/b/g0_v001.py"
    assert g.rules[0] == "add_associates"  # the blamed rule first, then the variants' others
    assert "declared exact: a rule bug" in groups[0].line()


def test_other_notes_group_by_their_normalized_detail():
    notes = [_n("flaky", "g0_v001", claimed_kind="miscompile",
                detail="alone, repro.py finds eager and compiled in agreement; claimed miscompile: [0] x: 3 exceed the fp64 bound"),
             _n("flaky", "g0_v002", claimed_kind="miscompile",
                detail="alone, repro.py finds eager and compiled in agreement; claimed miscompile: [0] x: 7 exceed the fp64 bound"),
             _n("resource", "g0_v003", detail="its repro did not finish within 300 s alone"),
             _n("resource", "g0_v004", detail="its repro did not finish within 240 s alone"),
             _n("miscompile", "g0_v005")]  # a compiler bug: not a note
    groups = aggregate_notes(notes, MODEL)
    assert [(g.kind, g.count) for g in groups] == [("flaky", 2), ("resource", 2)]
    assert groups[0].cause == "claimed miscompile: exceeds bound"


def test_note_group_round_trip_and_merge_over_runs():
    a = aggregate_notes([_n("nondeterministic", "g0_v001")], MODEL)[0]
    b = aggregate_notes([_n("nondeterministic", "g0_v002", device="cpu")], MODEL)[0]
    assert NoteGroup.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    assert a.key == b.key
    m = merge_note_groups([a, b])
    assert len(m) == 1 and m[0].count == 2 and m[0].variants == ("g0_v001", "g0_v002") and m[0].devices == ("cpu", "cuda")
    # a report written before there were groups: its notes are grouped on reading
    rep = {"model": MODEL, "findings": [_n("nondeterministic", "g0_v001"), _n("nondeterministic", "g0_v002")]}
    assert [(g.cause, g.count) for g in report_note_groups(rep)] == [("conv_transpose2d", 2)]


def test_the_table_has_one_line_per_root_cause_and_per_note_group():
    notes = [_n("nondeterministic", f"g0_v{k:03d}") for k in range(5)] + \
            [_n("unsound-rewrite", f"g0_v{k:03d}", rules=["add_associates"]) for k in range(4)]
    lines = root_cause_table([], aggregate_notes(notes, MODEL))
    assert lines[0].strip() == "root causes (compiler bugs): 0 distinct"
    assert lines[1].strip().startswith("notes (not compiler bugs), by kind: nondeterministic 5 in 1 cause(s), "
                                       "unsound-rewrite 4 in 1 cause(s)")
    assert len(lines) == 4


def test_sweep_notes_group_by_symptom_not_by_sweep_point():
    notes = [_n("sweep-also-base", "g0_v001", sweep="dtype=bfloat16,sizes=[31]", detail=(
                "[dtype=bfloat16,sizes=[31]] fails on special values, as the model's own dtype and sizes already do: "
                "[0] bfloat16[31, 16]: NaN/Inf positions differ at 8 of 496 elements, first at (9, 7): eager inf, "
                "compiled -inf, fp64 inf")),
             _n("sweep-also-base", "g0_v002", sweep="dtype=float16", detail=(
                "[dtype=float16] fails on special values, as the model's own dtype and sizes already do: "
                "[0] float16[8, 16]: NaN/Inf positions differ at 2 of 128 elements, first at (1, 1): eager -inf, "
                "compiled inf, fp64 -inf"))]
    [g] = aggregate_notes(notes, MODEL)
    assert g.count == 2 and g.cause == "fails on special values as at the model's own dtype: wrong sign of infinity"
    assert g.input_sets == ("dtype=bfloat16,sizes=[31]", "dtype=float16")


def test_the_blame_goes_to_the_fewest_declared_rules_that_explain_every_unsound_variant():
    # expm1 rewritten to exp(x) - 1 (approximate) loses precision near 0; the exact spelling rules that
    # rewrite the new exp afterwards ride along in the same variants and must not be blamed
    variant_rules = {"g0_seed": [], "g0_v001": ["expm1_is_exp_minus_one", "torch_exp_is_method"],
                     "g0_v002": ["expm1_is_exp_minus_one", "exp_in_float64_rounds_back"],
                     "g0_v003": ["expm1_is_exp_minus_one", "div_is_mul_reciprocal", "torch_exp_is_method"],
                     "g0_v004": ["div_is_mul_reciprocal"]}
    numerics = {"expm1_is_exp_minus_one": "approximate", "exp_in_float64_rounds_back": "approximate",
                "div_is_mul_reciprocal": "approximate", "torch_exp_is_method": "exact"}
    notes = [_n("unsound-rewrite", v, rules=variant_rules[v]) for v in ("g0_v001", "g0_v002", "g0_v003")]
    assert set(blame(notes, variant_rules, numerics).values()) == {"expm1_is_exp_minus_one"}
    [g] = aggregate_notes(notes, MODEL, variant_rules=variant_rules, numerics=numerics)
    assert (g.cause, g.count, g.loud, g.numerics) == ("expm1_is_exp_minus_one", 3, False, "approximate")
