"""Saturate an e-graph with compiled rules under budgets (iterations, e-nodes, seconds)."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from egglog import EGraph, String, back_off, eq, i64, rule, ruleset, run, set_, union, var

from rewrite.compile_rules import CompiledRule
from rewrite.program import Program
from rewrite.ruledsl import ANY_DTYPE
from rewrite.terms import Lifted, Term, add_program, dtype, dtype_in, list_term, lit_is, rank


@dataclass(frozen=True)
class Budget:
    iterations: int = 8
    max_enodes: int = 50_000
    seconds: float = 10.0
    ac_match_limit: int = 200  # back-off scheduler for associativity/commutativity rules


@dataclass
class SaturationResult:
    lifted: Lifted
    iterations: int
    enodes: int
    stop_reason: str  # "saturated" | "iterations" | "enodes" | "seconds"
    seconds: float
    fired: Counter = field(default_factory=Counter)  # rule name -> matches
    sizes: list = field(default_factory=list)  # e-nodes after each iteration


def group_name(dtypes) -> str:
    return "g:" + ",".join(sorted(dtypes))


def _expr(t, vars_: dict):
    kind = t[0]
    if kind in ("var", "svar"):
        return vars_[t[1]]
    if kind == "lit":
        return Term.lit(t[1])
    if kind == "seq":
        return Term.seq(t[1], list_term(_expr(a, vars_) for a in t[2]))
    if kind == "call":
        return Term.call(t[1], list_term(_expr(a, vars_) for a in t[2]),
                         list_term(Term.kw(k, _expr(v, vars_)) for k, v in t[3]))
    raise ValueError(kind)


def _fact_actions(t, vars_, ranks, dtypes, out):
    """set_ rank/dtype of every call node in rhs pattern `t` from the variables' facts."""
    if t[0] == "seq":
        for a in t[2]:
            _fact_actions(a, vars_, ranks, dtypes, out)
    if t[0] != "call":
        return
    for a in t[2]:
        _fact_actions(a, vars_, ranks, dtypes, out)
    for _, v in t[3]:
        _fact_actions(v, vars_, ranks, dtypes, out)
    rank_src, dtype_src = t[4]
    e = _expr(t, vars_)
    if rank_src:
        if rank_src[0] == "const":
            out.append(set_(rank(e)).to(i64(rank_src[1])))
        elif rank_src[1] in ranks:
            r = ranks[rank_src[1]]
            out.append(set_(rank(e)).to(r + i64(rank_src[2]) if rank_src[2] else r))
    if dtype_src:
        if dtype_src[0] == "const":
            out.append(set_(dtype(e)).to(String(dtype_src[1])))
        elif dtype_src[1] in dtypes:
            out.append(set_(dtype(e)).to(dtypes[dtype_src[1]]))


def egglog_rules(cr: CompiledRule, groups: set[str]) -> list:
    """egglog rules for one compiled rule (one per non-contiguous rank choice)."""
    vars_ = {v: var(f"v_{v}", Term) for v in list(cr.tensor_vars) + list(cr.scalar_vars)}
    ranks = {v: var(f"r_{v}", i64) for v in cr.tensor_vars}
    dtypes = {v: var(f"d_{v}", String) for v in cr.tensor_vars}
    root = var("root", Term)
    conds = []
    if cr.lhs[0] == "call":
        conds.append(eq(root).to(_expr(cr.lhs, vars_)))
        target = root
    else:
        target = vars_[cr.lhs[1]]
    rank_choices: list[dict] = [{}]
    for v, spec in cr.tensor_vars.items():
        conds += [rank(vars_[v]) == ranks[v], dtype(vars_[v]) == dtypes[v]]
        if spec["dtypes"] and set(spec["dtypes"]) != set(ANY_DTYPE):
            g = group_name(spec["dtypes"])
            groups.add(g)
            conds.append(dtype_in(vars_[v], String(g)))
        rs = spec["ranks"]
        if rs:
            if sorted(rs) == list(range(min(rs), max(rs) + 1)):
                conds += [ranks[v] >= i64(min(rs)), ranks[v] <= i64(max(rs))]
            else:
                rank_choices = [{**c, v: r} for c in rank_choices for r in rs]
    for v, kind in cr.scalar_vars.items():
        conds.append(lit_is(vars_[v], String(kind)))
    actions = [union(target).with_(_expr(cr.rhs, vars_))]
    _fact_actions(cr.rhs, vars_, ranks, dtypes, actions)
    out = []
    suffix = "" if cr.direction == "forward" else "~rev"
    for k, choice in enumerate(rank_choices):
        extra = [ranks[v] == i64(r) for v, r in choice.items()]
        name = f"{cr.name}{suffix}" + (f"#{k}" if len(rank_choices) > 1 else "")
        out.append(rule(*conds, *extra, name=name).then(*actions))
    return out


def rule_name_of(egglog_name: str) -> str:
    return egglog_name.split("~", 1)[0].split("#", 1)[0]


def enode_count(eg: EGraph) -> int:
    return sum(n for _, n in eg.all_function_sizes())


def saturate(program: Program, rules: list[CompiledRule], budget: Budget = Budget()) -> SaturationResult:
    """Lift `program` into a fresh e-graph and run `rules` one iteration at a time within budget."""
    t0 = time.perf_counter()
    groups: set[str] = set()
    main_rules, ac_rules = [], []
    for cr in rules:
        (ac_rules if "ac" in cr.tags else main_rules).extend(egglog_rules(cr, groups))
    t = var("t", Term)
    fact_rules = [rule(dtype(t) == String(d)).then(dtype_in(t, String(g)))
                  for g in groups for d in g[2:].split(",")]
    eg = EGraph()
    group_members = {g: tuple(g[2:].split(",")) for g in groups}
    lifted = add_program(eg, program, group_members)
    facts_rs = ruleset(*fact_rules) if fact_rules else None
    main_rs = ruleset(*main_rules) if main_rules else None
    ac_rs = ruleset(*ac_rules) if ac_rules else None
    schedule = None
    if main_rs is not None:
        schedule = run(main_rs)
    if ac_rs is not None:
        acs = run(ac_rs, scheduler=back_off(match_limit=budget.ac_match_limit, ban_length=2))
        schedule = acs if schedule is None else schedule + acs
    result = SaturationResult(lifted, 0, enode_count(eg), "saturated", 0.0)
    if schedule is None:
        result.seconds = time.perf_counter() - t0
        return result
    while True:
        if result.iterations >= budget.iterations:
            result.stop_reason = "iterations"
            break
        if facts_rs is not None:
            eg.run(facts_rs.saturate())
        report = eg.run(schedule)
        result.iterations += 1
        for name, n in report.num_matches_per_rule.items():  # keys: egglog RuleDecl
            result.fired[rule_name_of(getattr(name, "name", None) or str(name))] += n
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
    result.seconds = time.perf_counter() - t0
    return result
