"""The term language in egglog: one `Term` sort, rank/dtype/literal facts, Program <-> e-graph.

Terms mirror the program IR: `Term.input(name)`, `Term.lit(source)`, argument lists as
`cons`/`nil`, keyword arguments as `kw(name, value)`, Python sequences as `seq(kind, items)` and
calls as `call(target, args, kwargs)`. Facts used as rule conditions: `rank(t)`, `dtype(t)` and
the relations `dtype_in(t, group)` and `lit_is(t, kind)`.
"""
from __future__ import annotations

from dataclasses import dataclass

from egglog import EGraph, Expr, String, StringLike, function, i64, relation, set_

from rewrite.program import CALL, INPUT, LIT, SEQ, Program, lit_kind


class Term(Expr):
    @classmethod
    def input(cls, name: StringLike) -> Term: ...

    @classmethod
    def lit(cls, source: StringLike) -> Term: ...

    @classmethod
    def nil(cls) -> Term: ...

    @classmethod
    def cons(cls, head: Term, tail: Term) -> Term: ...

    @classmethod
    def kw(cls, name: StringLike, value: Term) -> Term: ...

    @classmethod
    def seq(cls, kind: StringLike, items: Term) -> Term: ...

    @classmethod
    def call(cls, target: StringLike, args: Term, kwargs: Term) -> Term: ...


@function(merge=lambda old, new: old)
def rank(t: Term) -> i64: ...


@function(merge=lambda old, new: old)
def dtype(t: Term) -> String: ...


dtype_in = relation("dtype_in", Term, String)
lit_is = relation("lit_is", Term, String)

# Function names as they appear in a frozen e-graph (module-qualified by egglog).
_PREFIX = f"{__name__.replace('.', '_')}_Term_"


def term_fn(name: str) -> str:
    return _PREFIX + name


def list_term(items) -> Term:
    t = Term.nil()
    for x in reversed(list(items)):
        t = Term.cons(x, t)
    return t


def program_terms(p: Program, leaf=None) -> list[Term]:
    """egglog expressions for every node of `p` (children shared by reference).

    `leaf(i, node)` may return a replacement for INPUT nodes (rule patterns use variables)."""
    out: list[Term] = []
    for i, n in enumerate(p.nodes):
        if n.kind == INPUT:
            t = leaf(i, n) if leaf else None
            out.append(t if t is not None else Term.input(n.name))
        elif n.kind == LIT:
            t = leaf(i, n) if leaf else None
            out.append(t if t is not None else Term.lit(n.name))
        elif n.kind == SEQ:
            out.append(Term.seq(n.name, list_term(out[a] for a in n.args)))
        elif n.kind == CALL:
            out.append(Term.call(n.name, list_term(out[a] for a in n.args),
                                 list_term(Term.kw(k, out[v]) for k, v in n.kwargs)))
        else:
            raise ValueError(n.kind)
    return out


@dataclass
class Lifted:
    """A program registered in an e-graph: `roots[i]` is the let-bound name of node i."""

    egraph: EGraph
    root: str
    node_names: dict[int, str]


def add_program(eg: EGraph, p: Program, dtype_groups: dict[str, tuple[str, ...]],
                prefix: str = "n") -> Lifted:
    """Register `p` with one `let` per call node (DAG sharing kept) and its facts."""
    exprs: list = []
    names: dict[int, str] = {}
    facts = []
    for i, n in enumerate(p.nodes):
        if n.kind == INPUT:
            e = Term.input(n.name)
        elif n.kind == LIT:
            e = Term.lit(n.name)
            k = lit_kind(n.name)
            if k:
                facts.append(lit_is(e, String(k)))
        elif n.kind == SEQ:
            e = Term.seq(n.name, list_term(exprs[a] for a in n.args))
        else:
            e = Term.call(n.name, list_term(exprs[a] for a in n.args),
                          list_term(Term.kw(k, exprs[v]) for k, v in n.kwargs))
        if n.kind in (CALL, SEQ):
            name = f"{prefix}{i}"
            e = eg.let(name, e)
            names[i] = name
        exprs.append(e)
        m = p.meta[i] if i < len(p.meta) else None
        if m is not None:
            facts.append(set_(rank(e)).to(i64(m.rank)))
            facts.append(set_(dtype(e)).to(String(m.dtype)))
            for g, members in dtype_groups.items():
                if m.dtype in members:
                    facts.append(dtype_in(e, String(g)))
    if facts:
        eg.register(*facts)
    return Lifted(eg, names[p.output], names)
