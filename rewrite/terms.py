"""The term language, written in egglog's own syntax: one `Term` sort, facts, Program -> e-graph text.

Terms mirror the program IR: `T_input(name)`, `T_lit(source)`, argument lists as
`T_cons`/`T_nil`, keyword arguments as `T_kw(name, value)`, Python sequences as
`T_seq(kind, items)` and calls as `T_call(target, args, kwargs)`. Facts used as rule conditions:
`rank(t)`, `dtype(t)` and the relations `dtype_in(t, group)` and `lit_is(t, kind)`.

Programs and rules are handed to egglog as text through its low-level bindings: building them
through egglog-python's expression API costs tens of milliseconds per rule, text costs
microseconds. egglog is pinned exactly (pyproject.toml) because this reads its internals.
"""
from __future__ import annotations

from egglog.bindings import EGraph

from rewrite.program import CALL, INPUT, LIT, SEQ, Program, lit_kind

SCHEMA = """
(sort Term)
(constructor T_input (String) Term)
(constructor T_lit (String) Term)
(constructor T_nil () Term)
(constructor T_cons (Term Term) Term)
(constructor T_kw (String Term) Term)
(constructor T_seq (String Term) Term)
(constructor T_call (String Term Term) Term)
(function rank (Term) i64 :merge old)
(function dtype (Term) String :merge old)
(relation dtype_in (Term String))
(relation lit_is (Term String))
"""

_FN_NAMES = {"input": "T_input", "lit": "T_lit", "nil": "T_nil", "cons": "T_cons", "kw": "T_kw",
             "seq": "T_seq", "call": "T_call"}


def term_fn(name: str) -> str:
    """The egglog function name of a Term constructor ("call" -> "T_call")."""
    return _FN_NAMES[name]


def q(s: str) -> str:
    """An egglog string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def list_text(items) -> str:
    out = "(T_nil)"
    for x in reversed(list(items)):
        out = f"(T_cons {x} {out})"
    return out


def run_text(eg: EGraph, text: str | list[str]) -> list:
    """Run egglog commands. A list is parsed one command at a time: egglog's parser is
    quadratic in the length of one text (200 rules: 6 s as one text, 0.1 s one by one)."""
    if isinstance(text, str):
        return eg.run_program(*eg.parse_program(text))
    out: list = []
    for cmd in text:
        out.extend(eg.run_program(*eg.parse_program(cmd)))
    return out


def new_egraph() -> EGraph:
    eg = EGraph()
    run_text(eg, SCHEMA)
    return eg


def program_text(p: Program, dtype_groups: dict[str, tuple[str, ...]], prefix: str = "n") -> tuple[list[str], dict[int, str]]:
    """egglog text registering `p` (one `let` per call or sequence node, so DAG sharing is
    kept) with its rank/dtype/literal facts; returns (text, node index -> let name)."""
    exprs: list[str] = []
    names: dict[int, str] = {}
    lines: list[str] = []
    facts: list[str] = []
    for i, n in enumerate(p.nodes):
        if n.kind == INPUT:
            e = f"(T_input {q(n.name)})"
        elif n.kind == LIT:
            e = f"(T_lit {q(n.name)})"
            k = lit_kind(n.name)
            if k:
                facts.append(f"(lit_is {e} {q(k)})")
        elif n.kind == SEQ:
            e = f"(T_seq {q(n.name)} {list_text(exprs[a] for a in n.args)})"
        elif n.kind == CALL:
            kws = list_text(f"(T_kw {q(k)} {exprs[v]})" for k, v in n.kwargs)
            e = f"(T_call {q(n.name)} {list_text(exprs[a] for a in n.args)} {kws})"
        else:
            raise ValueError(n.kind)
        if n.kind in (CALL, SEQ):
            name = f"${prefix}{i}"
            lines.append(f"(let {name} {e})")
            names[i] = name
            e = name
        exprs.append(e)
        m = p.meta[i] if i < len(p.meta) else None
        if m is not None:
            facts.append(f"(set (rank {e}) {m.rank})")
            facts.append(f"(set (dtype {e}) {q(m.dtype)})")
            for g, members in dtype_groups.items():
                if m.dtype in members:
                    facts.append(f"(dtype_in {e} {q(g)})")
    return lines + facts, names
