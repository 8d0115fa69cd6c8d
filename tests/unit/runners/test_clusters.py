"""Root-cause clusters (runners/findings/clusters.py): variants of one bug reached by different rules are one cluster, two bugs on one model are two, minimization re-keys a cluster by its pattern, clusters name their ledger entry and say whether the seed fails too; the record's JSON round trip."""
from __future__ import annotations

import json

import pytest

from eqsat_test.lowering.program import ProgramBuilder
from eqsat_test.runners import records
from eqsat_test.runners.findings.clusters import (
    Cluster,
    canonical_op,
    cluster_findings,
    clustered,
    cone_ops,
    input_class,
    merge_clusters,
    normalize_message,
    report_clusters,
    rewrite_yield,
    symptom_class,
)
from eqsat_test.runners.findings.ledger import load_ledger

MODEL = "models/quantize.py"
NAN_KIND = ("[0] float32[8, 16]: NaN/Inf positions differ at 2 of 128 elements, first at (3, 0): eager nan, "
            "compiled inf, fp64 nan (compiled disagrees in kind with both eager and fp64)")
BOUND = ("[1] float32[8, 16]: 3 exceed the fp64 bound of 128 elements, first at (0, 2): eager 1e-08, compiled 0, "
         "fp64 1e-08 (|compiled - fp64| = 1e-08 > ...)")


def _f(variant, *, kind="miscompile", rules=(), leaf="[0]", detail=NAN_KIND, input_set="special-0", cone=None,
       seed=False, device="cpu", **extra):
    f = {"kind": kind, "variant": variant, "graph": "g0", "backend": "inductor", "device": device, "rules": list(rules),
         "ops": ["torch.floor_divide", "torch.expm1", "operator.mul"], "seed": seed, "input_set": input_set,
         "leaf": leaf, "detail": detail, "id": f"{variant}-{kind}", "repro": f"/out/findings/{variant}/repro.py",
         "confirmed": True}
    if cone is not None:
        f["cone_ops"] = list(cone)
    f.update(extra)
    return f


def test_two_variants_of_one_bug_reached_by_different_rules_are_one_cluster():
    a = _f("g0_v001", rules=["floordiv_spelling"], cone=["operator.floordiv", "operator.mul"])
    b = _f("g0_v007", rules=["mul_commutes", "div_is_mul_reciprocal"], cone=["torch.floor_divide", "torch.mul"])
    (a, b), clusters = clustered([a, b], MODEL)
    assert len(clusters) == 1
    c = clusters[0]
    assert c.findings == 2 and c.variants == ("g0_v001", "g0_v007")
    assert c.rules == ("div_is_mul_reciprocal", "floordiv_spelling", "mul_commutes")
    assert c.pattern == ("floor_divide", "mul")  # spellings are one op; the ops both failing outputs depend on
    assert not c.minimized and c.scope == f"{MODEL}:g0:[0]"
    assert a.cluster == b.cluster == c.key
    assert c.symptom == "wrong NaN/inf kind" and c.input_class == "special values"


def test_two_bugs_on_one_model_are_two_clusters():
    nan = _f("g0_v001", rules=["r1"], cone=["torch.floor_divide"])
    nan_seed = _f("g0_seed", kind="seed-miscompile", seed=True, cone=["torch.floor_divide"])
    small = _f("g0_v002", rules=["r2"], leaf="[1]", detail=BOUND, input_set="given", cone=["torch.expm1"])
    clusters = cluster_findings([nan, nan_seed, small], MODEL)
    assert len(clusters) == 2
    by = {c.pattern: c for c in clusters}
    assert set(by) == {("floor_divide",), ("expm1",)}
    assert by[("floor_divide",)].findings == 2 and by[("expm1",)].findings == 1
    assert by[("expm1",)].symptom == "exceeds bound" and by[("expm1",)].input_class == "ordinary values"
    # the seed fails with the first, not with the second: exposed only by rewrites
    assert by[("floor_divide",)].seed_fails and not by[("expm1",)].seed_fails
    assert rewrite_yield(clusters) == (1, 2)


def test_the_representative_is_the_smallest_member_and_minimization_rekeys_the_cluster():
    big = _f("g0_v003", rules=["r3"], cone=["torch.floor_divide", "operator.mul", "torch.relu"])
    small = _f("g0_v004", rules=["r4"], cone=["torch.floor_divide", "operator.mul"])
    seed = _f("g0_seed", kind="seed-miscompile", seed=True, leaf="[2]", cone=["torch.floor_divide", "torch.sin"])
    (big, small, seed), first = clustered([big, small, seed], MODEL)
    assert len(first) == 2  # two outputs: two scopes before minimization
    by_variant = {c.variants[0]: c for c in first}
    assert by_variant["g0_v003"].representative == "g0_v004-miscompile"  # fewest ops in the failing cone
    # minimized once per cluster: both shrink to the one floor division; the members take the pattern
    small = small.with_(min_ops=["operator.floordiv"])
    seed = seed.with_(min_ops=["torch.floor_divide"])
    pattern_of = {small.cluster: small.min_ops, seed.cluster: seed.min_ops}
    (big, small, seed), final = clustered([big, small, seed], MODEL, pattern_of=pattern_of)
    assert len(final) == 1
    c = final[0]
    assert c.minimized and c.pattern == ("floor_divide",) and c.scope == ""
    assert c.findings == 3 and c.seed_members == 1 and c.seed_fails
    assert big.cluster == small.cluster == seed.cluster == c.key


def test_ledger_matching_names_the_entry_everywhere():
    ledger = load_ledger()
    f = _f("g0_v001", rules=["r1"], cone=["operator.floordiv", "operator.mul"])
    [f], [c] = clustered([f], MODEL, ledger)
    assert c.ledger == (7,) and c.known == "known: ledger #7"
    assert f.known == "known: ledger #7"
    assert c.to_dict()["known"] == "known: ledger #7" and "known: ledger #7" in c.line()
    # an op no ledger entry names: new
    g = _f("g0_v002", rules=["r1"], cone=["torch.sin"])
    c2 = cluster_findings([g], MODEL, ledger)[0]
    assert c2.ledger == () and c2.known == "new" and "known" not in g


def test_ledger_matching_uses_the_failing_cone_not_the_whole_graph():
    # the graph holds expm1 (ledger #6) and floor_divide (#7); the failing output depends on floor_divide only
    ledger = load_ledger()
    f = _f("g0_v001", rules=["r1"], cone=["torch.floor_divide"])
    assert cluster_findings([f], MODEL, ledger)[0].ledger == (7,)


def test_cluster_json_round_trip():
    f = _f("g0_v001", rules=["r1"], cone=["torch.floor_divide"], sweep="dtype=int8", sweep_key="dtype=int8",
           sweep_dtype="int8", input_set="sweep-dtype=int8-special")
    c = cluster_findings([f], MODEL, load_ledger())[0]
    d = json.loads(json.dumps(c.to_dict()))
    assert Cluster.from_dict(d) == c
    assert c.input_class == "special values, dtype=int8"
    assert report_clusters({"clusters": [d]}) == [c]


def test_clusters_of_several_runs_merge_by_key():
    a = cluster_findings([_f("g0_v001", rules=["r1"], cone=["torch.floor_divide"], min_ops=["torch.floor_divide"])],
                         "m1.py")
    b = cluster_findings([_f("g0_seed", kind="seed-miscompile", seed=True, cone=["operator.floordiv"],
                             min_ops=["operator.floordiv"])], "m2.py")
    assert a[0].key == b[0].key  # minimized: the pattern, not the model, is the key
    assert not a[0].seed_fails
    m = merge_clusters(a + b)
    assert len(m) == 1 and m[0].models == ("m1.py", "m2.py") and m[0].count == 2 and m[0].seed_fails


def test_every_compiler_bug_kind_clusters_and_notes_do_not(monkeypatch):
    monkeypatch.setattr(records, "COMPILER_BUG_KINDS", records.COMPILER_BUG_KINDS + ("grad-miscompile",))
    grad = _f("g0_v001", kind="grad-miscompile", rules=["r1"], cone=["torch.floor_divide"])
    note = _f("g0_v002", kind="unsound-rewrite", rules=["r2"])
    flaky = _f("g0_v003", rules=["r3"], confirmed=False)
    clusters = cluster_findings([grad, note, flaky], MODEL)
    assert [c.kind for c in clusters] == ["grad-miscompile"]


def test_crashes_cluster_by_type_and_normalized_message():
    def crash(v, msg):
        return _f(v, kind="compile-crash", rules=[v], leaf=None, detail=msg, cone=["torch.ne", "torch.le"],
                  error={"type": "InductorError", "message": msg})
    a = crash("g0_v001", "TypeError: A Boolean argument can only be used in Eq and Ne (at /tmp/x/y.py:12, size 128)")
    b = crash("g0_v002", "TypeError: A Boolean argument can only be used in Eq and Ne (at /tmp/z.py:99, size 64)")
    c = crash("g0_v003", "AssertionError: tiling")
    clusters = cluster_findings([a, b, c], MODEL)
    assert sorted(x.findings for x in clusters) == [1, 2]
    assert symptom_class(a) == symptom_class(b) and symptom_class(a).startswith("crash: InductorError: TypeError")


@pytest.mark.parametrize("detail, want", [
    ("[0] f: NaN/Inf positions differ at 1 of 4 elements, first at (0,): eager 1, compiled nan, fp64 1", "NaN where finite"),
    ("[0] f: NaN/Inf positions differ at 1 of 4 elements, first at (0,): eager nan, compiled 0, fp64 nan",
     "finite where NaN/inf"),
    ("[0] f: NaN/Inf positions differ at 1 of 4 elements, first at (0,): eager inf, compiled -inf, fp64 inf",
     "wrong sign of infinity"),
    ("[0] i: selected values differ along dim 1 at 3 of 8 indices", "wrong index"),
    ("[0] i: compiled index 300 out of range [0, 256) at (1,)", "wrong index"),
    ("[0] i: 2 of 8 elements differ (exact), first at (0,): eager -128, compiled 128", "wrong integer/bool values"),
    ("[0]: structure differs: shape (2, 1) vs (2, 1, 1)", "wrong shape"),
    ("[0]: structure differs: dtype torch.float16 vs torch.float32", "wrong dtype"),
    ("output: structure differs: length 2 vs 3", "wrong structure"),
    (BOUND, "exceeds bound"),
])
def test_symptom_classes(detail, want):
    assert symptom_class({"kind": "miscompile", "detail": detail}) == want


def test_names_and_inputs():
    assert canonical_op("operator.truediv") == "div" and canonical_op("Tensor.__rfloordiv__") == "floor_divide"
    assert canonical_op("Tensor.add_") == "add" and canonical_op("torch.nn.functional.relu") == "relu"
    assert normalize_message("shape [4, 8] at 0x7f00 in '/a/b.py'\nmore") == "shape [N, N] at N in <name>"
    assert input_class({"input_set": "given"}) == "ordinary values"
    assert input_class({"input_set": "sweep-dynamic-x-special", "sweep_key": "dynamic,dtype=int16"}) == \
        "special values, dtype=int16, dynamic"
    # a float bug shows at every float dtype: float sweeps are the model's own class; integer widths are not
    assert input_class({"input_set": "sweep-x-random", "sweep_key": "dtype=bfloat16", "sweep_dtype": "bfloat16"}) == \
        "ordinary values"
    assert input_class({"input_set": "given", "input_dtypes": ["float16"]}) == "ordinary values"
    assert input_class({"input_set": "huge-0"}) == "huge values"
    assert input_class({"input_set": "domain-0", "input_dtypes": ["float64"]}) == "domain edges"


def test_cone_of_one_output():
    b = ProgramBuilder()
    x = b.input("x")
    s = b.call("torch.sin", [x])
    e = b.call("torch.expm1", [s])
    f = b.call("torch.floor_divide", [x, b.lit(0.1)])
    prog = b.build(b.seq("tuple", [e, f]))
    assert cone_ops(prog, 0) == ["torch.sin", "torch.expm1"]
    assert cone_ops(prog, 1) == ["torch.floor_divide"]
    assert cone_ops(prog, None) == ["torch.sin", "torch.expm1", "torch.floor_divide"]


def test_the_failing_cone_and_its_input_dtypes_from_a_stored_program(tmp_path):
    from eqsat_test.lowering.bundle import StoredProgram, write_program
    from eqsat_test.lowering.manifest import Manifest, Variant
    from eqsat_test.lowering.program import TensorMeta
    from eqsat_test.runners.findings.clusters import failing_cone
    b = ProgramBuilder()
    x = b.input("x", TensorMeta((12, 40), "uint8"))
    y = b.input("y", TensorMeta((12,), "float32"))
    s = b.call("torch.amin", [x])
    t = b.call("torch.sin", [y])
    prog = b.build(b.seq("tuple", [s, t]))
    write_program(tmp_path / "g0_seed.program.json",
                  StoredProgram(prog, ("x", "y"), "g0.inputs.pt", "seed program"))
    manifest = Manifest(variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True, program="g0_seed.program.json"),))
    assert failing_cone({"variant": "g0_seed", "leaf": "[0]"}, tmp_path, manifest) == (["torch.amin"], ["uint8"])
    assert failing_cone({"variant": "g0_seed", "leaf": "[1]"}, tmp_path, manifest) == (["torch.sin"], ["float32"])
    assert failing_cone({"variant": "g0_v009"}, tmp_path, manifest) is None
    assert input_class({"input_set": "given", "input_dtypes": ["uint8"]}) == "ordinary values, dtype=uint8"


def test_a_float_sweep_shares_the_seeds_cluster_an_integer_sweep_joins_it_once_minimized():
    base = _f("g0_seed", kind="seed-miscompile", seed=True, detail=BOUND, leaf="[1]", input_set="given",
              cone=["torch.expm1"])
    bf16 = _f("g0_seed", kind="seed-miscompile", seed=True, detail="[dtype=bfloat16] " + BOUND, leaf="[1]",
              input_set="sweep-dtype=bfloat16-x-random", sweep="dtype=bfloat16", sweep_key="dtype=bfloat16",
              sweep_dtype="bfloat16", cone=["torch.expm1"])
    int8 = _f("g0_seed", kind="seed-miscompile", seed=True, detail="[dtype=int8] " + BOUND, leaf="[1]",
              input_set="sweep-dtype=int8-x-random", sweep="dtype=int8", sweep_key="dtype=int8", sweep_dtype="int8",
              cone=["torch.expm1"])
    (base, bf16, int8), first = clustered([base, bf16, int8], MODEL)
    assert sorted(c.findings for c in first) == [1, 2]
    base = base.with_(min_ops=["torch.expm1"])  # the cluster's representative, minimized: the sweep finding takes its pattern
    final = cluster_findings([base, bf16, int8], MODEL, pattern_of={base.cluster: base.min_ops})
    [c] = final
    assert c.findings == 3 and c.minimized and c.also == ("exceeds bound; ordinary values, dtype=int8",)


def test_unminimizable_findings_on_the_same_output_join_the_minimized_root_cause():
    """floor division (ledger #7): the seed's special set, minimized; its float16 and int8 dynamic sweep
    points (never minimized) fail on the same output with another symptom: one root cause."""
    special = _f("g0_seed", kind="seed-miscompile", seed=True, cone=["torch.floor_divide", "operator.mul"],
                 min_ops=["torch.floor_divide"])
    f16 = _f("g0_seed", kind="seed-miscompile", seed=True, detail="[dtype=float16] " + BOUND, input_set="sweep-x-random",
             sweep="dtype=float16", sweep_key="dtype=float16", sweep_dtype="float16",
             cone=["torch.floor_divide", "operator.mul", "operator.add"])
    i8 = _f("g0_seed", kind="seed-miscompile", seed=True, detail="[dynamic,dtype=int8] " + BOUND,
            input_set="sweep-y-random", sweep="dynamic,dtype=int8", sweep_key="dynamic,dtype=int8", sweep_dtype="int8",
            cone=["torch.floor_divide", "operator.mul"])
    for f in (f16, i8):
        f["leaf"] = "[0]"
    [c] = cluster_findings([special, f16, i8], MODEL, load_ledger())
    assert c.minimized and c.pattern == ("floor_divide",) and c.findings == 3 and c.ledger == (7,)
    assert c.also == ("exceeds bound; ordinary values", "exceeds bound; ordinary values, dtype=int8, dynamic")
    assert "also: exceeds bound; ordinary values | exceeds bound" in c.line()
    # two minimized root causes on that output: the sweep finding stays apart (nothing says whose it is)
    other = _f("g0_v001", rules=["r1"], detail=BOUND, input_set="given", cone=["operator.mul"], min_ops=["operator.mul"])
    assert len(cluster_findings([special, f16, other], MODEL)) == 3


def test_a_jobs_unminimized_cluster_joins_another_jobs_minimized_one_on_the_same_output():
    special = _f("g0_seed", kind="seed-miscompile", seed=True, cone=["torch.floor_divide"], min_ops=["torch.floor_divide"])
    f16 = _f("g0_seed", kind="seed-miscompile", seed=True, detail="[dtype=float16] " + BOUND, input_set="sweep-x-random",
             sweep="dtype=float16", sweep_key="dtype=float16", cone=["torch.floor_divide", "operator.mul"])
    a, b = cluster_findings([special], MODEL), cluster_findings([f16], MODEL)
    [m] = merge_clusters(a + b)
    assert m.key == a[0].key and m.absorbed == (b[0].key,) and m.count == 2
    assert m.also == ("exceeds bound; ordinary values",)


def test_one_minimized_pattern_on_one_output_is_one_root_cause_whatever_the_inputs():
    """floor division's NaN for inf (special values) and its off-by-one (ordinary values) on one output
    are ledger #7 both; the same pattern with another symptom on another model's output stays apart."""
    special = _f("g0_seed", kind="seed-miscompile", seed=True, cone=["torch.floor_divide"], min_ops=["torch.floor_divide"])
    ordinary = _f("g0_v003", rules=["r3"], detail=BOUND, input_set="random-0", cone=["operator.floordiv"],
                  min_ops=["operator.floordiv"])
    (special, ordinary), [c] = clustered([special, ordinary], MODEL)
    assert c.findings == 2 and c.also == ("exceeds bound; ordinary values",) and c.seed_fails
    assert special.cluster == ordinary.cluster == c.key
    elsewhere = cluster_findings([ordinary], "models/other.py")
    assert len(merge_clusters([c] + elsewhere)) == 2


def test_a_cluster_is_minimized_on_its_smallest_member_the_seed_first():
    from eqsat_test.runners.findings.minimize import _smallest
    big = _f("g0_v001", cone=["a", "b", "c"])
    small = _f("g0_v002", cone=["a"])
    seed = _f("g0_seed", kind="seed-miscompile", seed=True, cone=["a", "b", "c", "d"])
    assert [f.variant for f in sorted(map(records.as_finding, [big, small, seed]), key=_smallest)] == ["g0_seed", "g0_v002", "g0_v001"]


def test_one_crash_site_is_one_root_cause_across_models_a_generic_crash_message_is_not():
    def crash(v, msg, cone):
        return _f(v, kind="compile-crash", rules=[v], leaf=None, detail=msg, cone=cone,
                  error={"type": "InductorError", "message": msg})
    site = "TypeError: expecting bool or Boolean, not `-oo`."
    runs = [cluster_findings([crash("g0_v001", site, ["torch.arange", "torch.ne"])], "hf_bert.py"),
            cluster_findings([{**crash("g0_seed", site, ["torch.arange", "torch.ge"]), "seed": True}], "hf_llama.py"),
            cluster_findings([crash("g0_v002", "CppCompileError: C++ compile error", ["torch.abs"])], "a.py"),
            cluster_findings([crash("g0_v003", "CppCompileError: C++ compile error", ["torch.abs"])], "b.py")]
    merged = merge_clusters([c for r in runs for c in r])
    by_models = sorted(c.models for c in merged)
    assert by_models == [("a.py",), ("b.py",), ("hf_bert.py", "hf_llama.py")]  # a bare "C++ compile error" names no site
    one = next(c for c in merged if len(c.models) == 2)
    assert one.findings == 2 and one.seed_fails and one.scope == ""
