"""The term language, written in egglog's own syntax: one `Term` sort, facts, Program -> e-graph text.

Terms mirror the program IR: `T_input(name)`, `T_lit(source)`, lists as `T_cons`/`T_nil`,
keyword arguments as `T_kw(name, value)`, Python sequences as `T_seq(kind, items)`. A call has a
constructor of its own per (target, number of positional arguments): `operator.add(x, y)` is
`(C2_operator_2eadd x y kwargs)` (see `call_fn`). One table per target keeps egglog's joins
small: with one generic `T_call(target, arg-list, kwargs)` table every rule's query joined the
whole e-graph's argument lists, and two iterations on a 1,000-op graph took 6.3 s instead of
0.8 s. Facts used as rule conditions: `rank(t)`, `dtype(t)`, the relations
`dtype_in(t, group)` and `lit_is(t, kind)`, and `sizelit(t, dim, fn)`: the literal a size
function (`compile_rules.SIZE_FNS`) gives for extent `dim` of tensor t (both the positive and
the negative index), set for the program's tensors for the (function, dim) pairs the rules use.

Programs and rules are handed to egglog as text through its low-level bindings: building them
through egglog-python's expression API costs tens of milliseconds per rule, text costs
microseconds. egglog is pinned exactly (pyproject.toml) because this reads its internals.
"""
from __future__ import annotations

from egglog.bindings import EGraph

from eqsat_test.lowering.program import CALL, INPUT, LIT, SEQ, Program, lit_kind

SCHEMA = """
(sort Term)
(constructor T_input (String) Term)
(constructor T_lit (String) Term)
(constructor T_nil () Term)
(constructor T_cons (Term Term) Term)
(constructor T_kw (String Term) Term)
(constructor T_seq (String Term) Term)
(function rank (Term) i64 :merge old)
(function dtype (Term) String :merge old)
(relation dtype_in (Term String))
(relation lit_is (Term String))
(function sizelit (Term i64 String) Term :merge old)
"""

_FN_NAMES = {"input": "T_input", "lit": "T_lit", "nil": "T_nil", "cons": "T_cons", "kw": "T_kw",
             "seq": "T_seq"}


def term_fn(name: str) -> str:
    """The egglog function name of a fixed Term constructor ("seq" -> "T_seq")."""
    return _FN_NAMES[name]


def call_fn(target: str, arity: int) -> str:
    """The constructor of calls to `target` with `arity` positional arguments (and a kwargs
    list): "C<arity>_" + the target with every character but [A-Za-z0-9] as `_<hex>`, so the
    name is a valid egglog symbol and `parse_call_fn` gives the call back."""
    esc = "".join(ch if ch.isascii() and ch.isalnum() else "_%02x" % ord(ch) if ord(ch) < 256
                  else "_u%06x" % ord(ch) for ch in target)
    return f"C{arity}_{esc}"


def parse_call_fn(name: str) -> tuple[str, int] | None:
    """(target, arity) of a `call_fn` name; None for any other function."""
    if not name.startswith("C") or "_" not in name:
        return None
    head, esc = name[1:].split("_", 1)
    if not head.isdigit():
        return None
    out, i = [], 0
    while i < len(esc):
        if esc[i] != "_":
            out.append(esc[i])
            i += 1
        elif esc[i + 1] == "u":
            out.append(chr(int(esc[i + 2:i + 8], 16)))
            i += 8
        else:
            out.append(chr(int(esc[i + 1:i + 3], 16)))
            i += 3
    return "".join(out), int(head)


def call_text(target: str, args, kwargs_list: str) -> str:
    """egglog text of a call: `args` are the positional arguments' texts, `kwargs_list` a list."""
    args = list(args)
    return f"({call_fn(target, len(args))} {' '.join(args + [kwargs_list])})"


def program_calls(p: Program) -> set[tuple[str, int]]:
    """The (target, arity) pairs of `p`'s calls: the constructors its e-graph needs."""
    return {(n.name, len(n.args)) for n in p.nodes if n.kind == CALL}


def declare_calls(eg: EGraph, calls) -> None:
    """Declare the call constructors `calls` ((target, arity) pairs) in `eg`; each once."""
    run_text(eg, [f"(constructor {call_fn(t, a)} ({' '.join(['Term'] * (a + 1))}) Term)"
                  for t, a in sorted(set(calls))])


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


def new_egraph(calls=()) -> EGraph:
    """An e-graph with the Term schema and the call constructors `calls` ((target, arity))."""
    eg = EGraph()
    run_text(eg, SCHEMA)
    declare_calls(eg, calls)
    return eg


def program_text(p: Program, dtype_groups: dict[str, tuple[str, ...]], prefix: str = "n") -> tuple[list[str], dict[int, str]]:
    """egglog text registering `p` (one `let` per call or sequence node, so DAG sharing is
    kept) with its rank/dtype/literal facts; returns (text, node index -> let name). The
    e-graph must declare `program_calls(p)`."""
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
            e = call_text(n.name, (exprs[a] for a in n.args), kws)
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


def _size_facts(m, size_needs) -> list[tuple[int, str, str, str]]:
    """(dim, fn, literal source, literal kind) size facts of a tensor with meta m, for the
    (size function, dim) pairs of `size_needs` its rank has."""
    from eqsat_test.rewrite.compile_rules import size_literal  # (compile_rules needs torch; terms does not)

    out = []
    for fn, d in size_needs:
        if -m.rank <= d < m.rank and m.shape[d] > 0:  # an empty dim (a KV cache before its first entry) has no 1/n
            src = size_literal(fn, m.shape[d])
            out.append((d, fn, src, lit_kind(src) or ""))
    return out


def add_program(eg: EGraph, p: Program, prefix: str = "n", chunk: int = 200,
                size_needs=()) -> dict[int, str]:
    """Register `p` (DAG sharing kept) with its rank/dtype/literal facts, like `program_text`,
    and return node index -> name; only the output's name, `$<prefix><output>`, is a global.
    The e-graph must declare `program_calls(p)`.

    `program_text` costs a top-level `let` per node, and each top-level command costs time
    that grows with the e-graph (5,000 ops: 11 s). Here the nodes go in through one-shot rules
    of `chunk` nodes each, whose local lets are cheap; a node a later chunk uses is handed on
    through the table `eqsat_ref` (i64 -> Term). Commands are built as egglog objects, not
    text, because egglog's parser is quadratic in the length of one text. `dtype_in` facts are
    left to the `facts` ruleset, which saturate runs before every iteration.
    (5,000 ops: 11 s -> ~1 s.)"""
    from egglog import bindings as B

    sp = B.RustSpan("", 0, 0)
    ref_fn = f"eqsat_ref_{prefix}"
    run_text(eg, f"(function {ref_fn} (i64) Term :merge old)")
    s_ = lambda v: B.Lit(sp, B.String(v))  # noqa: E731
    i_ = lambda v: B.Lit(sp, B.Int(v))  # noqa: E731
    nil = B.Call(sp, "T_nil", [])

    def lst(items):
        t = nil
        for x in reversed(items):
            t = B.Call(sp, "T_cons", [x, t])
        return t

    kids = [list(n.args) + [v for _, v in n.kwargs] for n in p.nodes]
    bound = {i for i, n in enumerate(p.nodes) if n.kind in (CALL, SEQ)}  # let-bound; others inline
    last_use: dict[int, int] = {}
    for i, ks in enumerate(kids):
        for k in ks:
            last_use[k] = i
    last_use[p.output] = len(p.nodes)
    cmds: list = []
    exprs: list = []
    names: dict[int, str] = {}
    for c0 in range(0, len(p.nodes), chunk):
        c1 = min(len(p.nodes), c0 + chunk)
        outside = sorted({k for i in range(c0, c1) for k in kids[i] if k < c0 and k in bound})
        body = [B.Eq(sp, B.Var(sp, f"{prefix}{k}"), B.Call(sp, ref_fn, [i_(k)])) for k in outside]
        acts: list = []
        for i in range(c0, c1):
            n = p.nodes[i]
            if n.kind == INPUT:
                e = B.Call(sp, "T_input", [s_(n.name)])
            elif n.kind == LIT:
                e = B.Call(sp, "T_lit", [s_(n.name)])
                k = lit_kind(n.name)
                if k:
                    acts.append(B.Expr_(sp, B.Call(sp, "lit_is", [e, s_(k)])))
            elif n.kind == SEQ:
                e = B.Call(sp, "T_seq", [s_(n.name), lst([exprs[a] for a in n.args])])
            elif n.kind == CALL:
                e = B.Call(sp, call_fn(n.name, len(n.args)), [exprs[a] for a in n.args] +
                           [lst([B.Call(sp, "T_kw", [s_(k), exprs[v]]) for k, v in n.kwargs])])
            else:
                raise ValueError(n.kind)
            if i in bound:
                acts.append(B.Let(sp, f"{prefix}{i}", e))
                e = B.Var(sp, f"{prefix}{i}")
                names[i] = f"${prefix}{i}"
                if last_use.get(i, -1) >= c1:  # a later chunk, or the root, needs it
                    acts.append(B.Set(sp, ref_fn, [i_(i)], e))
            exprs.append(e)
            m = p.meta[i] if i < len(p.meta) else None
            if m is not None:
                acts.append(B.Set(sp, "rank", [e], i_(m.rank)))
                acts.append(B.Set(sp, "dtype", [e], s_(m.dtype)))
                for d, fn, src, k in (_size_facts(m, size_needs) if size_needs else ()):
                    lit = B.Call(sp, "T_lit", [s_(src)])
                    acts.append(B.Set(sp, "sizelit", [e, i_(d), s_(fn)], lit))
                    if k:
                        acts.append(B.Expr_(sp, B.Call(sp, "lit_is", [lit, s_(k)])))
        rs = f"eqsat_load_{prefix}{c0}"
        cmds += [B.AddRuleset(sp, rs), B.RuleCommand(B.Rule(sp, acts, body, rs, rs)),
                 B.RunSchedule(B.Run(sp, B.RunConfig(rs, None)))]
    root = names[p.output]
    cmds.append(B.ActionCommand(B.Let(sp, root, B.Call(sp, ref_fn, [i_(p.output)]))))
    eg.run_program(*cmds)
    return names
