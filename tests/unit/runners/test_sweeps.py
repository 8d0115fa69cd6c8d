"""Tests of runners/checks/sweeps.py: dtype and size sweeps (analysis by eager runs, points, values, the
low-precision leniency, batching/confirmation with planted bugs) and the sweeps end to end."""
from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
import torch
from conftest import warm_server

from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.checks.sweep_plan import (
    DEFAULT_DTYPES,
    Group,
    Point,
    SweepConfig,
    analyse,
    parse_dtypes,
    parse_sizes,
    plan_points,
    point_inputs,
)
from eqsat_test.runners.checks.sweep_run import run_sweeps
from eqsat_test.runners.checks.sweeps import sweep_findings
from eqsat_test.runners.findings.write import _repro_source, signature
from eqsat_test.runners.oracle.judge import judge
from eqsat_test.runners.protocol import load_module as _load_module
from eqsat_test.runners.records import Result, as_finding

REPO = Path(__file__).resolve().parents[3]
MODELS = REPO / "tests" / "models"

VARIANT = '''
import torch
from pathlib import Path

DEVICE = torch.device("cpu")


def forward({params}):
{body}


def index_sources({params}):
    return {{}}


def get_inputs(device=None):
    return INPUTS
'''


def _module(tmp_path: Path, name: str, params: str, body: str, inputs: list):
    """A variant-style module (forward, index_sources, get_inputs) written to tmp_path."""
    f = tmp_path / f"{name}.py"
    f.write_text(VARIANT.format(params=params, body=textwrap.indent(textwrap.dedent(body).strip(), "    ")))
    mod = _load_module(str(f))
    mod.INPUTS = inputs
    return mod


# ----------------------------------------------------------------------------------------------
# options


def test_parse_dtypes_and_sizes():
    assert parse_dtypes("half,bf16,int8,none") == ("float16", "bfloat16", "int8")
    assert parse_dtypes("none") == () and parse_dtypes("") == ()
    assert parse_dtypes("all") == DEFAULT_DTYPES
    with pytest.raises(ValueError):
        parse_dtypes("float7")
    assert parse_sizes("17,1-3,17") == (1, 2, 3, 17)
    assert parse_sizes("none") == ()
    assert parse_sizes("0,1") == (0, 1)  # 0: an empty dim
    with pytest.raises(ValueError):
        parse_sizes("-1")
    assert SweepConfig.from_dict(SweepConfig(dtypes=("int8",), sizes=(7,)).to_dict()) == \
        SweepConfig(dtypes=("int8",), sizes=(7,))


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_cli_sweep_options(tmp_path):
    from eqsat_test.runners.cli.main import cli
    from eqsat_test.runners.cli.options import parse_options

    def exec_opts(*args):  # `eqsat-test exec BUNDLE ARGS` -> its ExecOptions
        return parse_options(cli.commands["exec"].make_context("exec", [str(tmp_path), "-j", "1", *args]).params).execution
    eo = exec_opts()
    assert eo.sweep is not None and tuple(eo.sweep.dtypes) == DEFAULT_DTYPES  # on by default
    eo = exec_opts("--dtypes", "int8,half", "--sweep-sizes", "7,9", "--sweep-points", "1", "--sweep-dynamic", "all")
    assert eo.sweep.dtypes == ("int8", "float16") and eo.sweep.sizes == (7, 9)
    assert eo.sweep.points == 1 and eo.sweep.dynamic == "all"
    assert exec_opts("--no-sweep").sweep is None
    assert exec_opts("--dtypes", "none", "--sweep-sizes", "none").sweep is None
    bundle = tmp_path / "bundle"  # a folder that passes the bundle check (options are checked after it)
    bundle.mkdir()
    (bundle / "manifest.json").write_text("{}")
    r = warm_server().run(["exec", str(bundle), "--dtypes", "float7"], cli=True, cwd=REPO)
    assert r.returncode == 4 and "float7" in r.stderr, r.stderr


# ----------------------------------------------------------------------------------------------
# analysis, points and values


def test_analyse_finds_free_dims_and_dtype_policies(tmp_path):
    # a linear layer: x's last dim is tied to the weight, its first dim is free
    w, b, x = torch.randn(32, 16), torch.randn(32), torch.randn(8, 16)
    mod = _module(tmp_path, "lin", "w, b, x", "return (torch.nn.functional.linear(x, w, b).relu(),)", [w, b, x])
    plan = analyse(mod, [w, b, x], [True, True, False], SweepConfig())
    assert plan.data == [2] and plan.own_dtype == "float32"
    assert plan.groups == [Group(((2, 0),), 8)]
    assert "size=16" in plan.skipped
    assert plan.dtypes["float16"] == "follow" and plan.dtypes["float64"] == "follow"  # params follow floats
    assert not plan.discontinuous and not plan.int_division
    for name, _policy in plan.dtypes.items():  # every dtype kept is one the program runs at
        ins = point_inputs((w, b, x), [True, True, False], plan, Point(name, None), 0)
        for vals in ins.values():
            out = mod.forward(*vals)[0]
            assert out.shape == (8, 32)
            assert vals[2].dtype == getattr(torch, name)


def test_analyse_groups_equal_sizes_and_skips_what_fails(tmp_path):
    x, y = torch.randn(12, 7), torch.randn(12, 7)
    mod = _module(tmp_path, "ew", "x, y", "return ((x.abs() * 2.0 + y).floor().sum(dim=0),)", [x, y])
    plan = analyse(mod, [x, y], [False, False], SweepConfig())
    assert sorted(g.size for g in plan.groups) == [7, 12]
    assert all(len(g.members) == 2 for g in plan.groups)  # x and y change together
    assert plan.discontinuous  # floor
    assert "dtype=bool" in plan.skipped  # abs is not implemented for bool: decided by running it
    assert "int8" in plan.dtypes and plan.dtypes["int8"] == "keep"


def test_point_values_per_dtype(tmp_path):
    x = torch.randn(64, 64)
    mod = _module(tmp_path, "neg", "x", "return (-x,)", [x])
    plan = analyse(mod, [x], [False], SweepConfig())
    ins = point_inputs((x,), [False], plan, Point("int8", None), 0)
    r, s = ins["random"][0], ins["special"][0]
    assert r.dtype == torch.int8 and int(r.min()) < -64 and int(r.max()) > 64  # spread over the range
    assert {-128, 127} <= set(s.unique().tolist())
    u = point_inputs((x,), [False], plan, Point("uint8", None), 0)["special"][0]
    assert {0, 255} <= set(u.unique().tolist())
    h = point_inputs((x,), [False], plan, Point("float16", None), 0)["special"][0]
    assert h.dtype == torch.float16 and bool(h.isnan().any()) and bool(h.isinf().any())
    bl = point_inputs((x,), [False], plan, Point("bool", None), 0)["random"][0]
    assert bl.dtype == torch.bool and 0 < int(bl.sum()) < bl.numel()
    # a program that divides: no INT_MIN (INT_MIN // -1 traps in eager itself)
    dmod = _module(tmp_path, "div", "x", "return (x // 3,)", [x])
    dplan = analyse(dmod, [x], [False], SweepConfig())
    assert dplan.int_division
    d = point_inputs((x,), [False], dplan, Point("int32", None), 0)["special"][0]
    assert int(d.min()) > torch.iinfo(torch.int32).min and int(d.max()) == torch.iinfo(torch.int32).max
    # resized: values repeat the given tensor's statistics
    assert len(plan.groups) == 1  # both dims are 64: one group
    big = point_inputs((x * 10 + 5,), [False], plan, Point(None, (129,)), 0)
    assert big["random"][0].shape == (129, 129) and abs(float(big["random"][0].mean()) - 5) < 2


def test_points_seed_full_variant_sample(tmp_path):
    x, y = torch.randn(12, 7), torch.randn(12, 7)
    mod = _module(tmp_path, "pts", "x, y", "return (x * y + 1.0,)", [x, y])
    cfg = SweepConfig()
    plan = analyse(mod, [x, y], [False, False], cfg)
    full, dyn = plan_points([x, y], plan, cfg)
    cats = {p.category for p in full}
    assert cats == {"dtype", "sizes", "dtype,sizes", "layout"}
    assert len([p for p in full if p.category == "dtype"]) == len(plan.dtypes)
    assert dyn and 1 not in dyn[0] and len(set(dyn[0])) == len(dyn[0])  # distinct first sizes (duck sizing)
    small, sdyn = plan_points([x, y], plan, SweepConfig(full=False, key="g0_v001", points=3))
    assert len(small) == 3 and {p.category for p in small} == {"dtype", "sizes", "dtype,sizes"}
    assert set(small) <= set(full) and sdyn == []  # dynamic: the seed only by default
    many, _ = plan_points([x, y], plan, SweepConfig(full=False, key="g0_v001", points=40))
    assert not any(p.layout for p in many) and any(p.layout for p in full)  # layouts: the seed's only
    assert small == plan_points([x, y], plan, SweepConfig(full=False, key="g0_v001", points=3))[0]  # deterministic
    assert len(plan_points([x, y], plan, SweepConfig(full=False, key="g0_v001"))[0]) == 2  # the default
    others = {tuple(plan_points([x, y], plan, SweepConfig(full=False, key=f"g0_v{k:03d}"))[0]) for k in range(8)}
    assert len(others) > 1
    # the memory budget: no point beyond max_elements
    tight = SweepConfig(max_elements=2000)
    pts, _ = plan_points([x, y], plan, tight)
    for p in pts:
        if p.sizes:
            assert 2 * p.sizes[0] * p.sizes[1] <= 2000


# ----------------------------------------------------------------------------------------------
# the low-precision leniency


def test_lenient_judge_excuses_rounding_before_floor_but_not_wrong_values():
    g = torch.Generator().manual_seed(0)
    x32 = torch.rand(4000, generator=g) * 8
    x16 = x32.half()

    def f(x):
        return (torch.floor(x * 3.3) * 0.5, x * 1.7 > 5.0)

    eager = f(x16)
    ref32 = f(x16.float())  # what Inductor computes: the fp16 inputs, math in fp32
    compiled = tuple(t.half() if t.is_floating_point() else t for t in ref32)
    fp64 = f(x16.double())
    # eager's fp16 rounding flips a floor/comparison; compiled agrees with fp64 there: the judge's
    # own rules pass it now (the bools: between eager and the fp64 run, docs/oracle.md rule 4)
    strict = judge(eager, compiled, fp64)
    assert strict.ok and "between eager and the fp64 run" in strict.detail, strict.detail
    v = judge(eager, compiled, fp64, lenient=(ref32, fp64))
    assert v.ok
    wrong = (compiled[0].clone(), compiled[1].clone())
    same = (eager[0] == compiled[0]).nonzero()[0, 0]
    wrong[0][same] += 3.0  # a real error where every reference agrees
    assert not judge(eager, wrong, fp64, lenient=(ref32, fp64)).ok
    wrong_b = (compiled[0], compiled[1].clone())
    same_b = (eager[1] == compiled[1]).nonzero()[0, 0]
    wrong_b[1][same_b] = ~wrong_b[1][same_b]
    assert not judge(eager, wrong_b, fp64, lenient=(ref32, fp64)).ok


# ----------------------------------------------------------------------------------------------
# running: the null compiler, and planted bugs (custom backends) for batching and confirmation


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_null_backend_sweeps_clean(tmp_path):
    x, y = torch.randn(12, 7), torch.randn(12, 7)
    mod = _module(tmp_path, "null", "x, y",
                  "a = (x * 2.0 + y)\nreturn (torch.where(a > 0, a.exp(), -a).sum(dim=0), a.floor(), a.argmax(dim=1))",
                  [x, y])
    out = run_sweeps(mod, [x, y], [False, False], SweepConfig(sizes=(1, 7, 8, 9, 17), dynamic="all"),
                     backend="eager", save_compiled=str(tmp_path / "c"), save_eager=str(tmp_path / "e"))
    s = out["summary"]
    assert s["judged"] > 20 and s["failing"] == 0
    assert s["compiles"] == -(-len(s["points"]) // SweepConfig().batch) + 1  # batches of static points + one dynamic
    labels = {e["sweep"] for e in out["entries"]}
    assert "dtype=int8" in labels and any(lb.startswith("sizes=[") for lb in labels)
    assert any(lb.startswith("dynamic,") for lb in labels)
    assert all((tmp_path / "e" / f"{e['name']}.pt").is_file() for e in out["entries"] if e["kind"] != "skipped")


def _planted(name: str, wrong) -> str:
    """Register a Dynamo backend that runs the graph eagerly but corrupts outputs when wrong(inputs)."""
    from torch._dynamo import register_backend

    def backend(gm, example_inputs):
        def run(*args):
            out = gm(*args)
            if wrong([a for a in args if isinstance(a, torch.Tensor)]):
                return [o + 1 if isinstance(o, torch.Tensor) and o.dtype != torch.bool else o for o in out]
            return out
        return run

    register_backend(name=name, compiler_fn=backend)
    return name


def test_planted_dtype_bug_is_confirmed_alone_and_saved(tmp_path):
    x = torch.randn(6, 9)
    mod = _module(tmp_path, "pl", "x", "return (x.abs() * 2,)", [x])
    backend = _planted("planted_int8", lambda ts: any(t.dtype == torch.int8 for t in ts))
    out = run_sweeps(mod, [x], [False], SweepConfig(sizes=(7, 17), dynamic="none", batch=1), backend=backend,
                     save_compiled=str(tmp_path / "c"))
    bad = [e for e in out["entries"] if not e["ok"]]
    assert bad and {e["sweep_key"] for e in bad} == {"dtype=int8", "dtype=int8,sizes"}
    confirmed = [e for e in bad if e.get("confirmed")]
    assert len({e["sweep_category"] for e in confirmed}) == 2  # one per category, the rest not re-run
    saved = torch.load(confirmed[0]["inputs_file"])
    assert saved[0].dtype == torch.int8
    base = {"variant": "g0_seed", "graph": "g0", "backend": backend, "device": "cpu", "rules": [], "mode": "seed",
            "ops": []}
    res = Result.from_dict({"status": "ok", "input_sets": out["entries"], "task": "x#sweep"})
    findings, notes = sweep_findings(base, Variant("g0_seed", "g0", "g0_seed.py", seed=True), res)
    assert sorted(f.sweep_key for f in findings) == ["dtype=int8", "dtype=int8,sizes"]
    assert all(f.kind == "seed-miscompile" and f.failing_inputs for f in findings)


def test_planted_size_bug_and_crash_bisected_out_of_the_batch(tmp_path):
    x = torch.randn(6, 9)
    mod = _module(tmp_path, "pl2", "x", "return (x * 3,)", [x])
    backend = _planted("planted_17", lambda ts: any(17 in t.shape for t in ts))
    out = run_sweeps(mod, [x], [False], SweepConfig(dtypes=(), sizes=(8, 17, 33), dynamic="none"), backend=backend)
    bad = [e for e in out["entries"] if not e["ok"] and e.get("confirmed")]
    assert bad and all("17" in e["sweep"] for e in bad) and bad[0]["sweep_key"] == "sizes"

    from torch._dynamo import register_backend

    def crashing(gm, example_inputs):
        if any(isinstance(t, torch.Tensor) and t.dtype == torch.int16 for t in example_inputs):
            raise RuntimeError("planted crash at int16")
        return gm

    register_backend(name="planted_crash", compiler_fn=crashing)
    out = run_sweeps(mod, [x], [False], SweepConfig(dtypes=("int8", "int16", "float16"), sizes=(), dynamic="none",
                                                    layouts=()), backend="planted_crash")
    crashes = [e for e in out["entries"] if e["kind"] == "compile-crash"]
    assert [e["sweep"] for e in crashes] == ["dtype=int16"] and crashes[0]["confirmed"]
    assert sum(1 for e in out["entries"] if e["ok"] and e["kind"] == "match") == 4  # int8, float16 x 2 sets


def test_failures_only_in_a_batch_are_notes(tmp_path):
    x = torch.randn(6, 9)
    mod = _module(tmp_path, "pl4", "x", "return (x - 1,)", [x])
    backend = _planted("planted_batch", lambda ts: len(ts) > 1)  # wrong only when two programs share a graph
    out = run_sweeps(mod, [x], [False], SweepConfig(dtypes=("int8", "float16"), sizes=(), dynamic="none", layouts=()),
                     backend=backend)
    bad = [e for e in out["entries"] if not e["ok"]]
    assert bad and not any(e.get("confirmed") for e in bad)
    base = {"variant": "g0_v001", "graph": "g0", "backend": backend, "device": "cpu", "rules": ["r"],
            "mode": "uniform", "ops": []}
    findings, notes = sweep_findings(base, Variant("g0_v001", "g0", "g0_v001.py"), Result.from_dict({"status": "ok", "input_sets": out["entries"]}))
    assert not findings and [n.kind for n in notes] == ["sweep-unconfirmed"]


def test_planted_dynamic_bug(tmp_path):
    x = torch.randn(6, 9)
    mod = _module(tmp_path, "pl3", "x", "return (x.sum(dim=1),)", [x])

    from torch._dynamo import register_backend

    def dyn_wrong(gm, example_inputs):
        symbolic = any(isinstance(t, torch.SymInt) for t in example_inputs)  # sizes passed as inputs

        def run(*args):
            out = gm(*args)
            return [o + 1 for o in out] if symbolic else out
        return run

    register_backend(name="planted_dynamic", compiler_fn=dyn_wrong)
    out = run_sweeps(mod, [x], [False], SweepConfig(dtypes=(), sizes=(7, 9, 17), dynamic="all"),
                     backend="planted_dynamic", save_compiled=str(tmp_path / "c"))
    bad = [e for e in out["entries"] if not e["ok"] and e.get("confirmed")]
    assert bad and bad[0]["sweep_category"] == "dynamic" and bad[0]["compile_extra"] == {"dynamic": True}
    assert not [e for e in out["entries"] if not e["ok"] and not e["sweep"].startswith("dynamic")]


# ----------------------------------------------------------------------------------------------
# findings: signature and repro


def test_signature_uses_the_sweep_key_and_repro_compiles_dynamic():
    f = {"kind": "miscompile", "backend": "inductor", "device": "cpu", "ops": ["a"], "rules": ["r"],
         "sweep": "sizes=[17, 33]", "sweep_key": "sizes"}
    assert signature(f) == signature({**f, "sweep": "sizes=[9, 65]"})
    assert signature(f) != signature({**f, "sweep": "dtype=int8", "sweep_key": "dtype=int8"})
    assert signature(f) != signature({k: v for k, v in f.items() if k not in ("sweep", "sweep_key")})
    src = textwrap.dedent('''
        import torch
        from pathlib import Path
        DEVICE = torch.device("cpu")
        INPUTS_FILE = Path(__file__).with_name("g0.inputs.pt")


        def forward(x):
            return (x + 1,)


        def get_inputs(device=None):
            return torch.load(INPUTS_FILE)
        ''')
    text = _repro_source(src, as_finding(f).with_(detail="d", compile_extra={"dynamic": True}, warmup_file="w.pt"))
    ast.parse(text)
    assert 'compiled_program(backend="inductor", dynamic=True)' in text
    assert "warmup.pt" in text and "sweep: sizes=[17, 33]" in text


# ----------------------------------------------------------------------------------------------
# end to end: the real command line


RULES = '''
"""A small rule set for the sweep tests."""
import torch

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, Tensor, rule


@rule(family="algebra", numerics="exact", same_shape=False)
def add_commutes(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x + y, y + x


@rule(family="algebra", numerics="exact", same_shape=False)
def mul_commutes(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x * y, y * x
'''


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep_rules")
    (d / "sweep_rules.py").write_text(RULES)
    return d


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_default_run_reports_the_sweep_bug(eqsat, tmp_path, rules_dir):
    """tests/models/sweep_int16_abs.py is float32 only; its compiled form is wrong at int16."""
    out = tmp_path / "out"
    r = eqsat(str(MODELS / "sweep_int16_abs.py"), "-n", "2", "-r", str(rules_dir), "--jobs", "1", "--json", "--no-artifacts",
              "--out", str(out), timeout=600)
    assert r.rc == 1, r.stderr[-3000:]
    found = [f for f in r.json["findings"] if f.get("sweep") and f["kind"] in ("miscompile", "seed-miscompile")]
    assert found, json.dumps(r.json["findings"], indent=1)[:3000]
    f = next((f for f in found if f["sweep_key"] == "dtype=int16"), found[0])
    assert "int16" in f["sweep"]
    meta = json.loads((Path(f["repro"]).parent / "meta.json").read_text())
    assert meta["sweep"] == f["sweep"]
    inputs = torch.load(Path(f["repro"]).parent / "inputs.pt")
    assert inputs[0].dtype == torch.int16
    rep = warm_server().run([f["repro"]], cli=False, cwd=Path(f["repro"]).parent, timeout=300)
    assert rep.returncode == 1 and "MISCOMPILE" in rep.stdout, rep.stdout + rep.stderr[-2000:]


def test_variant_of_dtype_bound_rules_is_swept_only_at_their_dtypes(tmp_path):
    """A rule that holds at float32 only (a float64 round trip cast back to float32) makes its
    variant equivalent at float32 only: the dtype sweep must not run it at float64 and blame the rule."""
    from eqsat_test.rewrite.generate import _variant_dtypes
    from eqsat_test.rewrite.ruledsl import FLOATING, Rule, Tensor
    from eqsat_test.runners.checks.sweeps import make_sweep_tasks

    def fn(x):
        return x, x
    f32 = Rule("r32", "t", "exact", fn, {"x": Tensor(dtype="float32")})
    flt = Rule("rf", "t", "exact", fn, {"x": Tensor(dtype=FLOATING), "y": Tensor()})
    anyr = Rule("ra", "t", "exact", fn, {"x": Tensor()})
    assert f32.dtypes == ("float32",) and anyr.dtypes is None and set(flt.dtypes) == set(FLOATING)
    table = {r.name: list(r.dtypes) for r in (f32, flt, anyr) if r.dtypes is not None}
    assert _variant_dtypes(["ra"], table) is None
    assert _variant_dtypes(["ra", "rf", "r32"], table) == ["float32"]
    manifest = Manifest(graphs=(Graph("g0", is_param=(False,)),), variants=(
        Variant("g0_seed", "g0", "s.py", seed=True), Variant("g0_v001", "g0", "a.py", dtypes=("float32",)),
        Variant("g0_v002", "g0", "b.py", dtypes=tuple(sorted(FLOATING))), Variant("g0_v003", "g0", "c.py")))
    tasks = make_sweep_tasks(tmp_path, manifest, SweepConfig().to_dict(), backends=["inductor"], devices=["cpu"],
                             seed=0, input_kinds=["random"], scratch=tmp_path, first_backend="inductor")
    dt = {t.variant: tuple(t.sweep["dtypes"]) for t in tasks}
    assert dt["g0_seed"] == DEFAULT_DTYPES and dt["g0_v003"] == DEFAULT_DTYPES
    assert dt["g0_v001"] == ()
    assert dt["g0_v002"] == tuple(d for d in DEFAULT_DTYPES if d in FLOATING)


def _halves(x):  # a rule that reads a size writes it into the variant as a literal
    n = x.shape[0]
    return x.sum(0), x.narrow(0, 0, n // 2).sum(0) + x.narrow(0, n // 2, n - n // 2).sum(0)


def test_variant_of_a_size_fixing_rule_is_not_swept_over_sizes(tmp_path):
    """examples/elementwise.py's default run: `sum_first_is_two_partial_sums` wrote narrow(0, 0, 6) and
    narrow(0, 6, 6) into variants of a 12-row input; at the size sweep's 63 rows they sum 12 rows, and
    19 unsound-rewrite notes blamed the rule. A variant built by a rule that reads sizes keeps its dtype
    sweep, not its size and dynamic sweeps."""
    from eqsat_test.rewrite.ruledsl import Rule, Tensor, load_rules
    from eqsat_test.runners.checks.sweeps import make_sweep_tasks

    assert Rule("h", "t", "approximate", _halves, {"x": Tensor()}).fixes_sizes
    assert not Rule("s", "t", "exact", lambda x: (x.sum(0), x.sum(0)), {"x": Tensor()}).fixes_sizes
    assert "sum_first_is_two_partial_sums" in {r.name for r in load_rules(None) if r.fixes_sizes}
    manifest = Manifest(graphs=(Graph("g0", is_param=(False,)),), variants=(
        Variant("g0_seed", "g0", "s.py", seed=True), Variant("g0_v001", "g0", "a.py", fixed_sizes=True),
        Variant("g0_v002", "g0", "b.py")))
    tasks = make_sweep_tasks(tmp_path, manifest, SweepConfig(dynamic="all").to_dict(), backends=["inductor"],
                             devices=["cpu"], seed=0, input_kinds=["random"], scratch=tmp_path, first_backend="inductor")
    cfg = {t.variant: t.sweep for t in tasks}
    assert tuple(cfg["g0_v001"]["sizes"]) == () and cfg["g0_v001"]["dynamic"] == "none"
    assert tuple(cfg["g0_v001"]["dtypes"]) == DEFAULT_DTYPES
    assert tuple(cfg["g0_v002"]["sizes"]) == tuple(SweepConfig().sizes) and cfg["g0_v002"]["dynamic"] == "all"


# ----------------------------------------------------------------------------------------------
# shape edges, layouts and points sized by their cost


def test_static_size_points_take_the_shape_edges(tmp_path):
    from eqsat_test.runners.checks.sweep_plan import SHAPE_EDGES
    x, y = torch.randn(12, 7), torch.randn(12, 7)
    mod = _module(tmp_path, "edges", "x, y", "return (x * y + 1.0, (x - y).sum(0))", [x, y])
    plan = analyse(mod, [x, y], [False, False], SweepConfig())
    pts, dyn = plan_points([x, y], plan, SweepConfig(), [False, False])
    sized = [p.sizes for p in pts if p.category == "sizes"]
    for g in range(2):  # every group takes every edge size once: empty, 1, odd sizes around vector widths
        assert sorted(a[g] for a in sized) == sorted(SHAPE_EDGES)
    assert dyn and all(0 not in a and 1 not in a for a in dyn)  # specialised sizes stay out of dynamic
    out = run_sweeps(mod, [x, y], [False, False], SweepConfig(dtypes=(), dynamic="none", layouts=()), backend="eager")
    judged = {e["sweep"] for e in out["entries"] if e["kind"] != "skipped"}
    assert {"sizes=[0, 18]", "sizes=[17, 0]", "sizes=[18, 1]"} <= judged and out["summary"]["failing"] == 0


def _recording(name: str, seen: list):
    """A Dynamo backend that runs the graph eagerly and records its example inputs' strides."""
    from torch._dynamo import register_backend

    def backend(gm, example_inputs):
        seen.extend(tuple(t.stride()) for t in example_inputs if isinstance(t, torch.Tensor))
        return gm

    register_backend(name=name, compiler_fn=backend)
    return name


def test_layout_points_reach_the_compiler_and_are_judged(tmp_path):
    x, y = torch.randn(6, 9), torch.randn(6, 9)
    mod = _module(tmp_path, "lay", "x, y", "return ((x * 2 + y).sum(1), x.t() @ y)", [x, y])
    seen: list = []
    out = run_sweeps(mod, [x, y], [False, False], SweepConfig(dtypes=(), sizes=(), dynamic="none"),
                     backend=_recording("recording_strides", seen))
    assert out["summary"]["points"] == ["layout=strided", "layout=expanded"]
    assert out["summary"]["point_categories"] == ["layout", "layout"]
    assert {e["sweep"] for e in out["entries"] if e["ok"] and e["kind"] == "match"} == set(out["summary"]["points"])
    assert (0, 1) in seen  # expanded: the first dim broadcast (stride 0)
    assert (2, 13) in seen  # strided: transposed in memory, every other column


def test_layout_a_program_writes_to_is_set_aside_when_expanded(tmp_path):
    x = torch.randn(6, 9)
    mod = _module(tmp_path, "inplace", "x", "y = x * 1.0\ny.add_(1.0)\nx.mul_(2.0)\nreturn (y,)", [x])
    out = run_sweeps(mod, [x], [False], SweepConfig(dtypes=(), sizes=(), dynamic="none"), backend="eager")
    assert out["summary"]["eager_invalid_points"] == ["layout=expanded"]  # eager refuses a write to stride 0
    assert any(e["sweep"] == "layout=strided" for e in out["entries"])


def test_planted_layout_bug_is_confirmed_with_its_layout_saved(tmp_path):
    x = torch.randn(6, 9)
    mod = _module(tmp_path, "pl5", "x", "return (x.abs() * 2,)", [x])
    backend = _planted("planted_stride0", lambda ts: any(0 in t.stride() for t in ts))
    out = run_sweeps(mod, [x], [False], SweepConfig(dtypes=("int8",), sizes=(7,), dynamic="none", batch=1),
                     backend=backend, save_compiled=str(tmp_path / "c"))
    bad = [e for e in out["entries"] if not e["ok"] and e.get("confirmed")]
    assert bad and {e["sweep_key"] for e in bad} == {"layout=expanded"}
    saved = torch.load(bad[0]["inputs_file"])
    assert saved[0].stride() == (0, 1)  # repro.py loads the same layout


def test_costly_points_run_smaller_and_say_so(tmp_path):
    from eqsat_test.runners.checks.sweep_plan import Cost, program_cost
    a, b, c = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64)
    mod = _module(tmp_path, "mm", "a, b, c", "return (torch.relu(a @ b) @ c,)", [a, b, c])
    cost = program_cost(mod, (a, b, c))
    assert cost == Cost(elements=3 * 64 * 64, flops=2 * 2 * 64**3)
    assert cost.seconds(torch.int64) > cost.seconds(torch.float32)  # no BLAS for integers
    cfg = SweepConfig(dtypes=("int64", "float64"), sizes=(7,), point_seconds=cost.seconds(torch.float32) / 4)
    plan = analyse(mod, [a, b, c], [False] * 3, cfg)
    assert set(plan.cost_sizes) == {"", "int64", "float64"} and plan.dtypes.keys() == {"int64", "float64"}
    for d, (z,) in plan.cost_sizes.items():
        small = program_cost(mod, tuple(torch.randn(z, z) for _ in range(3)))
        assert z < 64 and small.seconds(DTYPE[d]) <= cfg.point_seconds
    pts, _ = plan_points([a, b, c], plan, cfg, [False] * 3)
    p = next(p for p in pts if p.dtype == "int64" and p.cost_sized)
    assert p.label == f"dtype=int64,sizes=[{plan.cost_sizes['int64'][0]}]"  # the sizes used, recorded
    assert p.category == "dtype" and p.key == "dtype=int64"  # still the dtype point
    assert all(p.sizes is not None and p.sizes[0] <= plan.cost_sizes[""][0] for p in pts if p.layout)
    out = run_sweeps(mod, [a, b, c], [False] * 3, cfg, backend="eager")
    shapes = {e["sweep"]: e["shapes"][0] for e in out["entries"]}
    assert shapes[p.label] == [p.sizes[0]] * 2 and out["summary"]["cost_sizes"]["int64"] == list(p.sizes)


def test_costly_point_no_free_dim_shrinks_is_not_swept(tmp_path):
    w, x = torch.randn(64, 64), torch.randn(64)
    mod = _module(tmp_path, "mv", "w, x", "return (w @ x,)", [w, x])
    plan = analyse(mod, [w, x], [True, False], SweepConfig(dtypes=("int32",), point_seconds=1e-9))
    assert not plan.groups and "too costly" in plan.skipped["dtype=int32"] and "layouts" in plan.skipped
    assert plan_points([w, x], plan, SweepConfig(point_seconds=1e-9), [True, False])[0] == []


DTYPE = {"": torch.float32, "int64": torch.int64, "float64": torch.float64}


def test_the_variants_of_a_graph_are_sampled_the_same_points(tmp_path):
    """A graph's variants share one sample of sweep points (their key is the graph): variants that Inductor
    compiles to the same code then meet the same points, and each point costs one compile between them (its
    code cache), not one per variant. Variants of another graph get a sample of their own."""
    from eqsat_test.runners.checks.sweeps import make_sweep_tasks

    manifest = Manifest(graphs=(Graph("g0", is_param=(False, False)), Graph("g1", is_param=(False, False))),
                        variants=tuple(Variant(f"{g}_{v}", g, f"{g}{v}.py", seed=v == "seed")
                                       for g in ("g0", "g1") for v in ("seed", "v001", "v002", "v003")))
    tasks = make_sweep_tasks(tmp_path, manifest, SweepConfig().to_dict(), backends=["inductor"], devices=["cpu"],
                             seed=0, input_kinds=["random"], scratch=tmp_path, first_backend="inductor")
    cfgs = {t.variant: SweepConfig.from_dict(t.sweep) for t in tasks}
    assert {cfgs[f"g0_v00{k}"].key for k in (1, 2, 3)} == {"g0"} and cfgs["g1_v001"].key == "g1"
    x, y = torch.randn(12, 7), torch.randn(12, 7)
    mod = _module(tmp_path, "same", "x, y", "return (x * y + 1.0,)", [x, y])
    plan = analyse(mod, [x, y], [False, False], SweepConfig())
    picks = {v: tuple(plan_points([x, y], plan, c)[0]) for v, c in cfgs.items() if not c.full}
    assert picks["g0_v001"] == picks["g0_v002"] == picks["g0_v003"]
    assert len({picks[f"g{g}_v001"] for g in range(2)} | {tuple(plan_points([x, y], plan, SweepConfig(
        full=False, key=f"g{k}"))[0]) for k in range(2, 8)}) > 1  # graphs' samples differ
