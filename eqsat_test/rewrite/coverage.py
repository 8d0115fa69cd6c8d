"""Rule coverage of a model: its ops, the ops no rule touches, how many distinct variants its e-graph gives.

`coverage(model_path)` loads and captures the model the way `eqsat-test generate` does, then per
graph: the call targets and their counts, the targets no rule of the library has on its
left-hand side (`untouched`: no rule could ever rewrite them), the targets no rule that fired
matched (`not_rewritten`), and the number of distinct variants extraction finds when asked for
`variants` of them (the original program not counted). Returns plain dataclasses (`asdict`-able).
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.functionalize import functionalize
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.load import load_model
from eqsat_test.rewrite.compile_rules import CompiledRule, compile_rules, pattern_ops
from eqsat_test.rewrite.extract import extract_variants, read_egraph
from eqsat_test.rewrite.generate import family_labeler
from eqsat_test.rewrite.ruledsl import load_rules
from eqsat_test.rewrite.saturate import Budget, saturate


@dataclass
class GraphCoverage:
    index: int
    num_ops: int
    ops: dict  # call target -> how many times the graph calls it
    untouched: list  # targets no rule has on its lhs
    not_rewritten: list  # targets no rule that fired has on its lhs
    distinct_variants: int  # distinct variants found (the original excluded)
    asked: int
    enodes: int = 0
    iterations: int = 0
    stop_reason: str = ""
    rules_fired: int = 0  # rules with at least one match
    families_fired: list = field(default_factory=list)
    families_in_variants: list = field(default_factory=list)  # families credited in the variants
    skipped: str = ""  # why the graph was not rewritten ("" when it was)
    seconds: float = 0.0


@dataclass
class ModelCoverage:
    model: str
    graphs: list  # [GraphCoverage]
    error: str = ""  # why the model could not be loaded or captured ("" when it could)
    seconds: float = 0.0

    @property
    def ops(self) -> Counter:
        c: Counter = Counter()
        for g in self.graphs:
            c.update(g.ops)
        return c

    @property
    def untouched(self) -> list:
        return sorted({t for g in self.graphs for t in g.untouched})

    def as_dict(self) -> dict:
        return {**asdict(self), "ops": dict(self.ops), "untouched": self.untouched}


def lhs_ops(compiled: list[CompiledRule]) -> set[str]:
    """Every call target some rule can rewrite (on the lhs of a rule or of its reverse)."""
    out: set[str] = set()
    for cr in compiled:
        out |= pattern_ops(cr.lhs)
    return out


def load_compiled(rules=None) -> tuple[list, list[CompiledRule]]:
    """(rules, compiled rules) of the rule specs `rules` (default: the built-in library)."""
    rs = load_rules(list(rules) if rules else None)
    compiled, _errors = compile_rules(rs)
    return rs, compiled


def coverage(model_path: str | Path, *, rules=None, variants: int = 32, seed: int = 0,
             budget: Budget = Budget(), stratify: bool = True, max_growth: float = 4.0,
             compiled: tuple | None = None) -> ModelCoverage:
    """Coverage of one model file by a rule library (`rules`: rule specs as for `--rules`, or
    `compiled`: an already loaded `(rules, compiled_rules)` pair, to share across models).
    `variants` are asked per graph; `stratify` makes the variants show every rule family that
    fired where the sampled pool has one (see `extract.extract_variants`)."""
    t0 = time.perf_counter()
    rs, crs = compiled if compiled is not None else load_compiled(rules)
    can_rewrite = lhs_ops(crs)
    out = ModelCoverage(str(model_path), [])
    try:
        loaded = load_model(model_path, seed=seed)
        graphs = capture(loaded.module, loaded.inputs)
    except Exception as e:  # a model that cannot be loaded counts, with its reason
        out.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        out.seconds = time.perf_counter() - t0
        return out
    family = {r.name: r.family for r in rs}
    for g in graphs:
        tg = time.perf_counter()
        functional = functionalize(g.gm)  # as generation lifts it (rewrite/generate.py)
        lifted = lift_fx(functional.gm if functional.gm is not None else g.gm, functional.effects)
        prog = lifted.program
        ops = Counter(prog.ops())
        gc = GraphCoverage(g.index, prog.num_ops, dict(sorted(ops.items())),
                           sorted(set(ops) - can_rewrite), sorted(ops), 0, variants)
        if lifted.mutating or lifted.opaque:
            gc.skipped = ("in-place ops" if lifted.mutating else f"ops without importable names {lifted.opaque}")
            out.graphs.append(gc)
            continue
        sat = saturate(prog, crs, budget)
        ec = read_egraph(sat.lifted.egraph, sat.lifted.root, prog, sat.lifted.node_names)
        labels = family_labeler(prog, crs, family) if stratify else None
        ex = extract_variants(ec, variants, seed=seed, max_ops=int(prog.num_ops * max_growth) + 16,
                              exclude={prog.key()}, labels=labels)
        del sat.lifted.egraph  # drop the e-graph on the thread that made it
        fired = {name for name, n in sat.fired.items() if n and name in family}
        by_name = {cr.name: cr for cr in crs}
        rewritten: set[str] = set()
        for name in fired:
            rewritten |= pattern_ops(by_name[name].lhs)
        for cr in crs:  # the reverse of a bidirectional rule has the other side as its lhs
            if cr.name in fired:
                rewritten |= pattern_ops(cr.lhs)
        gc.not_rewritten = sorted(set(ops) - rewritten)
        gc.distinct_variants = len(ex.variants)
        gc.enodes, gc.iterations, gc.stop_reason = sat.enodes, sat.iterations, sat.stop_reason
        gc.rules_fired = len(fired)
        gc.families_fired = sorted({family[n] for n in fired})
        if labels is not None:
            gc.families_in_variants = sorted({f for p, _ in ex.variants for f in labels(p)})
        gc.seconds = time.perf_counter() - tg
        out.graphs.append(gc)
    torch._dynamo.reset()
    out.seconds = time.perf_counter() - t0
    return out
