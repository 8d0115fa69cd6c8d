"""Saturate an e-graph with compiled rules under budgets (iterations, e-nodes, seconds)."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from egglog.bindings import EGraph

from eqsat_test.lowering.program import Program
from eqsat_test.rewrite import provenance as prov
from eqsat_test.rewrite.compile_rules import CompiledRule, pattern_calls, pattern_ops
from eqsat_test.rewrite.ruledsl import ANY_DTYPE
from eqsat_test.rewrite.terms import (
    add_program,
    call_text,
    list_text,
    new_egraph,
    parse_call_fn,
    program_calls,
    q,
    run_text,
)

# stop_reason in words, for the console
STOP_REASONS = {"saturated": "saturated", "iterations": "stopped: iteration budget",
                "enodes": "stopped: e-node budget", "seconds": "stopped: time budget"}

@dataclass(frozen=True)
class Budget:
    iterations: int = 8
    max_enodes: int = 50_000
    seconds: float = 10.0
    ac_match_limit: int = 200  # back-off scheduler for associativity/commutativity rules


@dataclass
class Lifted:
    """A program registered in an e-graph: `root` is the let name of its output node."""

    egraph: EGraph
    root: str
    node_names: dict[int, str]


@dataclass
class SaturationResult:
    lifted: Lifted
    iterations: int
    enodes: int
    stop_reason: str  # "saturated" | "iterations" | "enodes" | "seconds" (STOP_REASONS says them in words)
    seconds: float
    fired: Counter = field(default_factory=Counter)  # rule name -> matches
    rules_registered: int = 0
    sizes: list = field(default_factory=list)  # e-nodes after each iteration


def group_name(dtypes) -> str:
    return "g:" + ",".join(sorted(dtypes))


def _expr(t) -> str:
    kind = t[0]
    if kind in ("var", "svar"):
        return f"_v_{t[1]}"
    if kind == "lit":
        return f"(T_lit {q(t[1])})"
    if kind == "seq":
        return f"(T_seq {q(t[1])} {list_text(_expr(a) for a in t[2])})"
    if kind == "call":
        kws = list_text(f"(T_kw {q(k)} {_expr(v)})" for k, v in t[3])
        return call_text(t[1], (_expr(a) for a in t[2]), kws)
    raise ValueError(kind)


def _fact_actions(t, tensor_vars, out: list[str]) -> None:
    """`set` rank/dtype of every call node of rhs pattern `t` from the variables' facts."""
    if t[0] == "seq":
        for a in t[2]:
            _fact_actions(a, tensor_vars, out)
    if t[0] != "call":
        return
    for a in t[2]:
        _fact_actions(a, tensor_vars, out)
    for _, v in t[3]:
        _fact_actions(v, tensor_vars, out)
    rank_src, dtype_src = t[4]
    e = _expr(t)
    if rank_src:
        if rank_src[0] == "const":
            out.append(f"(set (rank {e}) {rank_src[1]})")
        elif rank_src[1] in tensor_vars:
            r = f"_r_{rank_src[1]}"
            out.append(f"(set (rank {e}) {f'(+ {r} {rank_src[2]})' if rank_src[2] else r})")
    if dtype_src:
        if dtype_src[0] == "const":
            out.append(f"(set (dtype {e}) {q(dtype_src[1])})")
        elif dtype_src[1] in tensor_vars:
            out.append(f"(set (dtype {e}) _d_{dtype_src[1]})")


def egglog_rules(cr: CompiledRule, groups: set[str], ruleset: str = "main", provenance: bool = True) -> list[str]:
    """egglog rule text for one compiled rule (one rule per choice of non-contiguous ranks);
    `provenance`: also record which rule built each rhs e-node (rewrite/provenance.py)."""
    conds: list[str] = []
    if cr.lhs[0] == "call":
        conds.append(f"(= _root {_expr(cr.lhs)})")
        target = "_root"
    else:
        target = f"_v_{cr.lhs[1]}"
    rank_choices: list[dict] = [{}]
    for v, spec in cr.tensor_vars.items():
        conds += [f"(= (rank _v_{v}) _r_{v})", f"(= (dtype _v_{v}) _d_{v})"]
        if spec["dtypes"] and set(spec["dtypes"]) != set(ANY_DTYPE):
            g = group_name(spec["dtypes"])
            groups.add(g)
            conds.append(f"(dtype_in _v_{v} {q(g)})")
        rs = spec["ranks"]
        if rs:
            if sorted(rs) == list(range(min(rs), max(rs) + 1)):
                conds += [f"(>= _r_{v} {min(rs)})", f"(<= _r_{v} {max(rs)})"]
            else:
                rank_choices = [{**c, v: r} for c in rank_choices for r in rs]
    for v, kind in cr.scalar_vars.items():
        conds.append(f"(lit_is _v_{v} {q(kind)})")
    for v, (src, dim, fn) in cr.size_vars.items():  # a literal derived from src's shape
        conds.append(f"(= _v_{v} (sizelit _v_{src} {dim} {q(fn)}))")
    actions = [f"(union {target} {_expr(cr.rhs)})"]
    _fact_actions(cr.rhs, cr.tensor_vars, actions)
    if provenance:
        actions += prov.actions(cr, _expr)
    out = []
    suffix = "" if cr.direction == "forward" else "~rev"
    for k, choice in enumerate(rank_choices):
        extra = [f"(= _r_{v} {r})" for v, r in choice.items()]
        name = f"{cr.name}{suffix}" + (f"#{k}" if len(rank_choices) > 1 else "")
        out.append(f"(rule ({' '.join(conds + extra)}) ({' '.join(actions)}) :ruleset {ruleset} :name {q(name)})")
    return out


def _fact_needs(cr: CompiledRule) -> list[frozenset]:
    """Per tensor variable with a rank or dtype condition: the facts one of which some term must
    have for the rule to match (("rank", r) / ("dtype", d) pairs)."""
    needs = []
    for spec in cr.tensor_vars.values():
        if spec["ranks"]:
            needs.append(frozenset(("rank", r) for r in spec["ranks"]))
        if spec["dtypes"] and set(spec["dtypes"]) != set(ANY_DTYPE):
            needs.append(frozenset(("dtype", d) for d in spec["dtypes"]))
    return needs


def _facts_present(eg: EGraph, seen: set, wanted: set) -> None:
    """Add to `seen` the facts of `wanted` some term of the e-graph has (facts only accrue)."""
    for kind, value in sorted(wanted - seen, key=str):
        v = q(value) if kind == "dtype" else str(value)
        try:
            run_text(eg, f"(check (= ({kind} _t) {v}))")
        except Exception:  # egglog raises when the check fails
            continue
        seen.add((kind, value))


def rule_name_of(egglog_name: str) -> str:
    return egglog_name.split("~", 1)[0].split("#", 1)[0]


def enode_count(eg: EGraph) -> int:
    sizes = run_text(eg, "(print-size)")[0].sizes
    return sum(n for name, n in sizes if name.startswith("T_") or parse_call_fn(name))


def relevant_rules(program: Program, rules: list[CompiledRule]) -> list[CompiledRule]:
    """The rules that can ever fire on `program`: those whose lhs ops are all present or made
    present by another relevant rule's rhs (a fixpoint). egglog spends milliseconds per rule on
    registration, so a 700-rule library on a 10-op graph would otherwise cost seconds."""
    have = set(program.ops())
    todo = list(rules)
    keep: list[CompiledRule] = []
    changed = True
    while changed:
        changed = False
        rest = []
        for cr in todo:
            if pattern_ops(cr.lhs) <= have:
                keep.append(cr)
                new = pattern_ops(cr.rhs) - have
                if new:
                    have |= new
                    changed = True
            else:
                rest.append(cr)
        todo = rest
    return keep


def saturate(program: Program, rules: list[CompiledRule], budget: Budget = Budget(),
             provenance: bool = True) -> SaturationResult:
    """Lift `program` into a fresh e-graph and run `rules` one iteration at a time within budget.
    `provenance`: rewrites record which rule built each e-node (read with provenance.read_credit)."""
    t0 = time.perf_counter()
    groups: set[str] = set()
    text: list[str] = ["(ruleset facts)", "(ruleset main)", "(ruleset ac)"]
    has = {"main": False, "ac": False}
    rules = relevant_rules(program, rules)
    # Rules are registered when all their lhs ops are in the e-graph (the program's ops and the
    # rhs ops of rules that fired): every rule's query runs over each iteration's new e-nodes,
    # so idle rules cost time (5,000 ops: 216 of 590 relevant rules can fire in iteration 1).
    # A rule whose tensor variables need a rank or dtype no term has yet cannot match either
    # (ranks and dtypes present are asked of the e-graph between iterations: cheap checks).
    # (egglog text is made at registration: most relevant rules never get there)
    staged: list[tuple[set, list, CompiledRule, str]] = []
    by_name: dict[str, CompiledRule] = {}
    for cr in rules:
        rs = "ac" if "ac" in cr.tags else "main"
        has[rs] = True
        staged.append((pattern_ops(cr.lhs), _fact_needs(cr), cr, rs))
        by_name[cr.name + ("" if cr.direction == "forward" else "~rev")] = cr
        for spec in cr.tensor_vars.values():
            if spec["dtypes"] and set(spec["dtypes"]) != set(ANY_DTYPE):
                groups.add(group_name(spec["dtypes"]))
    present = set(program.ops())
    facts_seen: set = set()
    for g in sorted(groups):
        for d in g[2:].split(","):
            text.append(f"(rule ((= (dtype _t) {q(d)})) ((dtype_in _t {q(g)})) :ruleset facts)")
    calls = program_calls(program)
    for cr in rules:
        calls |= pattern_calls(cr.lhs) | pattern_calls(cr.rhs)
    eg = new_egraph(calls)
    run_text(eg, text)
    declared: set = set()  # provenance tables declared so far
    size_needs = sorted({(fn, dim) for cr in rules for _, dim, fn in cr.size_vars.values()})
    names = add_program(eg, program, size_needs=size_needs)  # dtype_in facts: the facts ruleset
    lifted = Lifted(eg, names[program.output], names)
    steps = []
    if has["main"]:
        steps.append("(run main)")
    if has["ac"]:
        steps.append("(run-with _bo ac)")
    result = SaturationResult(lifted, 0, enode_count(eg), "saturated", 0.0, rules_registered=0)
    if not steps:
        result.seconds = time.perf_counter() - t0
        return result
    # One iteration per run-schedule, so budgets are checked between iterations (egglog has no
    # node limit or timeout of its own); the back-off scheduler lives inside the schedule.
    bo = (f"(let-scheduler _bo (back-off :match-limit {budget.ac_match_limit} :ban-length 2)) "
          if has["ac"] else "")
    iteration = f"(run-schedule (seq {bo}(saturate (run facts)) {' '.join(steps)}))"
    while True:
        if result.iterations >= budget.iterations:
            result.stop_reason = "iterations"
            break
        candidates = [st for st in staged if st[0] <= present]
        if candidates:
            _facts_present(eg, facts_seen, {f for st in candidates for need in st[1] for f in need})
            live = [st for st in candidates if all(need & facts_seen for need in st[1])]
            if live:
                ids = {id(st) for st in live}
                staged = [st for st in staged if id(st) not in ids]
                if provenance:
                    run_text(eg, prov.declarations([st[2] for st in live], declared))
                run_text(eg, [t for _, _, cr, rs in live for t in egglog_rules(cr, groups, rs, provenance)])
                result.rules_registered = len(rules) - len(staged)
        before, t_it = result.enodes, time.perf_counter()
        outputs = run_text(eg, iteration)
        t_it = time.perf_counter() - t_it
        report = outputs[-1].report
        result.iterations += 1
        for name, n in report.num_matches_per_rule.items():
            if name.split("#", 1)[0] not in by_name:
                continue  # the facts ruleset's unnamed rules (reported by their egglog text)
            result.fired[rule_name_of(name)] += n
            if n:
                present |= pattern_ops(by_name[name.split("#", 1)[0]].rhs)
        result.enodes = enode_count(eg)
        result.sizes.append(result.enodes)
        if not report.updated:
            result.stop_reason = "saturated"
            break
        if result.enodes >= budget.max_enodes:
            result.stop_reason = "enodes"
            break
        if time.perf_counter() - t0 >= budget.seconds:
            result.stop_reason = "seconds"
            break
        # egglog cannot stop an iteration midway, and the next one costs about (growth)^2 times
        # this one (1,000 ops: 0.3 s, 6 s, 25 s): do not start one predicted to overrun.
        growth = max(1.0, result.enodes / max(1, before))
        if time.perf_counter() - t0 + t_it * growth * growth > budget.seconds:
            result.stop_reason = "seconds"
            break
        if result.enodes * growth > budget.max_enodes:
            result.stop_reason = "enodes"
            break
    result.seconds = time.perf_counter() - t0
    return result
