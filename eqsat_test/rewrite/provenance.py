"""Rule provenance: each rewrite records which rule built the e-nodes it adds; variants are credited from that record.

egglog keeps no provenance of its own, so the rewrites keep it. Every compiled rule's actions
also write, for each call node of its right-hand side, `(set (P_<ctor> <children>) "rule")`:
`P_<ctor>` has the signature of the call constructor `<ctor>` (see `terms.call_fn`), so its rows
are keyed on exactly the e-nodes (constructor + child e-classes) the rule built, and they are
canonicalized with them when e-classes merge. `:merge old` keeps the first rule that built an
e-node. A rule whose right-hand side builds no call (a bare variable, `x.t().t() -> x`, or a
literal) instead records the e-node its left-hand side matched, in the relation `U_<ctor>`.

Crediting a variant (`Credit.rules_of`): the variant and the seed program are walked against
the saturated e-graph, so that each of their nodes is an e-node (`Credit.walk`).
- A call e-node the variant uses and the seed does not was built by a rule: its `P_` row.
- Where the variant uses a seed e-node as an argument of a seed e-node, but the seed used
  another one there, the two e-nodes' e-classes were merged by a rule: the most direct record
  of that is credited (the `P_` row of the e-node chosen, as for `relu(relu(x)) -> relu(x)`
  whose rhs already existed; the `U_` rows of the e-node replaced, as for `x.t().t() -> x`;
  ...). Under a new e-node the seed's choice is read from the seed e-nodes of the same e-class
  (the lhs the rule matched): `x.relu()` built from `torch.relu(x.t().t())` expects
  `x.t().t()` there, so choosing `x` credits `x.t().t() -> x` as well; and from what the rule
  that built the new e-node built as its argument (`(a + b).t() -> a.t() + b.t()` builds
  `y.t().t()` for b = `y.t()`: choosing `y` there credits `x.t().t() -> x`).
- A new e-node the variant uses as an argument of a seed e-node came into the seed's e-class by a
  merge: a bare-variable rule that matched it is credited (`relu(x) -> relu(x.to(float64).to(float32))`,
  renamed to `x.double().float()`, which `x.double().float() -> x` merges with x).
What is not recorded is which e-node a rule matched when its rhs builds calls, so under a new
e-node a merge of seed e-classes can go uncredited (e.g. `relu(relu(x)) -> relu(x)` for a
variant `x.t().t().relu()` made from the second relu): the credit is a lower bound there.
A rule is only ever credited from a row its own firing wrote: a rule that never fired is never
credited.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from eqsat_test.lowering.program import CALL, INPUT, LIT, SEQ, Program
from eqsat_test.rewrite.terms import call_fn, parse_call_fn, q, term_fn

MADE = "P_"  # P_<ctor>(children...) -> String: the rule whose rhs first built that e-node
MATCHED = "U_"  # U_<ctor>(children..., String): rules with a call-free rhs that matched that e-node
NUMERICS_ORDER = {"approximate": 0, "ieee-edge": 1, "exact": 2}  # non-exact rules first


def _calls_in(t, out: list) -> None:
    """The call subpatterns of pattern `t`, children first."""
    if t[0] == "seq":
        for a in t[2]:
            _calls_in(a, out)
    if t[0] != "call":
        return
    for a in t[2]:
        _calls_in(a, out)
    for _, v in t[3]:
        _calls_in(v, out)
    out.append(t)


def made_calls(rhs) -> set[tuple[str, int]]:
    """(target, arity) of the call nodes a rule's rhs builds: the `P_` tables it writes."""
    found: list = []
    _calls_in(rhs, found)
    return {(t[1], len(t[2])) for t in found}


def matched_call(cr) -> tuple[str, int] | None:
    """(target, arity) of a compiled rule's lhs root when its rhs builds no call (a `U_` table)."""
    if made_calls(cr.rhs) or cr.lhs[0] != "call":
        return None
    return cr.lhs[1], len(cr.lhs[2])


def declarations(rules, declared: set) -> list[str]:
    """egglog commands declaring the `P_`/`U_` tables `rules` write that `declared` (updated)
    lacks: declared as rules are registered, as an idle table still costs egglog time."""
    out = []
    for cr in rules:
        for t, a in sorted(made_calls(cr.rhs)):
            if (MADE, t, a) not in declared:
                declared.add((MADE, t, a))
                out.append(f"(function {MADE}{call_fn(t, a)} ({' '.join(['Term'] * (a + 1))}) String :merge old)")
        m = matched_call(cr)
        if m is not None and (MATCHED, *m) not in declared:
            declared.add((MATCHED, *m))
            out.append(f"(relation {MATCHED}{call_fn(*m)} ({' '.join(['Term'] * (m[1] + 1))} String))")
    return out


def actions(cr, expr) -> list[str]:
    """egglog actions recording that rule `cr` built its rhs (or matched its lhs root);
    `expr(pattern)` is the egglog text of a pattern (saturate._expr)."""
    found: list = []
    _calls_in(cr.rhs, found)
    out, seen = [], set()
    for t in found:
        e = expr(t)  # "(C2_... a b kws)" -> "(set (P_C2_... a b kws) "rule")"
        if e not in seen:
            seen.add(e)
            out.append(f"(set ({MADE}{e[1:]} {q(cr.name)})")
    if not found and cr.lhs[0] == "call":
        e = expr(cr.lhs)
        out.append(f"({MATCHED}{e[1:-1]} {q(cr.name)})")
    return out


# --------------------------------------------------------------------------------------------
# Reading the record back


@dataclass
class Credit:
    """The saturated e-graph's e-nodes and provenance rows; walks programs into e-nodes and
    credits variants. Build with `read_credit` before the e-graph is dropped; it holds plain
    Python values only: e-classes and e-nodes are numbered with ints."""

    lookup: dict  # e-node key (fn, prim, child e-classes) -> e-node number
    classes: list  # e-node number -> its e-class
    calls: set  # the e-node numbers of calls
    made: dict  # call e-node -> rule name
    matched: dict  # call e-node -> sorted rule names
    numerics: dict = field(default_factory=dict)  # rule name -> numerics class
    _seed: tuple | None = None  # the seed's e-nodes, its edges, its children per (e-class, child e-class)
    _made_in: dict | None = None  # (e-class, rule) -> the e-nodes the rule built there

    def walk(self, p: Program, reachable_only: bool = True) -> dict[int, int]:
        """Node index -> e-node for the (reachable) nodes of `p` found in the e-graph (a node
        whose children are missing is left out)."""
        out: dict[int, int] = {}
        cls: dict[int, int] = {}
        classes, lookup = self.classes, self.lookup.get

        def note(key):
            e = lookup(key)
            return None if e is None else classes[e]

        nil = note(("nil", "", ()))

        def lst(items):
            c = nil
            for x in reversed(items):
                if c is None or x is None:
                    return None
                c = note(("cons", "", (x, c)))
            return c

        reach = set(p.reachable()) if reachable_only else None
        for i, n in enumerate(p.nodes):
            if reach is not None and i not in reach:
                continue
            kind = n.kind
            if kind == CALL:
                kids = [cls.get(a) for a in n.args]
                kids.append(lst([note(("kw", k, (cls.get(v),))) for k, v in n.kwargs]) if n.kwargs else nil)
                key = ("call", n.name, tuple(kids))
            elif kind == INPUT:
                key = ("input", n.name, ())
            elif kind == LIT:
                key = ("lit", n.name, ())
            elif kind == SEQ:
                key = ("seq", n.name, (lst([cls.get(a) for a in n.args]),))
            else:
                continue
            e = lookup(key)
            if e is None:  # (a missing child makes a key with None: not found either)
                continue
            cls[i] = classes[e]
            out[i] = e
        return out

    @staticmethod
    def _edges(p: Program, w: dict) -> list:
        """(parent e-node or -1 for the output, slot, child e-node) of program `p`."""
        out = [(-1, "out", w[p.output])] if p.output in w else []
        nodes = p.nodes
        for i, e in w.items():
            n = nodes[i]
            for k, j in enumerate(n.args):
                if j in w:
                    out.append((e, k, w[j]))
            for k, j in n.kwargs:
                if j in w:
                    out.append((e, k, w[j]))  # (kwarg names cannot clash with positions)
        return out

    def _built_by(self, rule: str | None, c) -> set:
        """The e-nodes of e-class c that `rule` built."""
        if rule is None:
            return set()
        if self._made_in is None:
            self._made_in = {}
            for e, r in self.made.items():
                self._made_in.setdefault((self.classes[e], r), set()).add(e)
        return self._made_in.get((c, rule), set())

    def set_seed(self, seed: Program) -> None:
        w = self.walk(seed)
        edges: dict = {}
        kids_in: dict = {}  # (e-class, child e-class) -> the seed's children there
        for parent, slot, child in self._edges(seed, w):
            edges.setdefault((parent, slot), set()).add(child)
        cls = self.classes
        for (parent, _), children in edges.items():
            if parent >= 0:
                for child in children:
                    kids_in.setdefault((cls[parent], cls[child]), set()).add(child)
        self._seed = (set(w.values()), edges, kids_in)

    def rules_of(self, variant: Program) -> list[str]:
        """The rules that built `variant` from the seed (`set_seed`), non-exact ones first
        (approximate, ieee-edge, exact), then in the order the variant's nodes use them."""
        assert self._seed is not None, "set_seed first"
        seed_keys, seed_edges, kids_in = self._seed
        found: list[str] = []

        def credit(name):
            if name and name not in found:
                found.append(name)

        w = self.walk(variant, reachable_only=False)  # (extraction builds from the output)
        cls, made, matched = self.classes, self.made, self.matched
        for e in w.values():  # e-nodes the seed lacks: built by the rule that made them
            if e not in seed_keys and e in self.calls:
                credit(made.get(e))
        nodes = variant.nodes
        todo = [(-1, "out", w[variant.output])] if variant.output in w else []
        for i, parent in w.items():
            n = nodes[i]
            if parent in seed_keys:  # quick pass: the seed's own arguments need no look
                for slot, j in list(enumerate(n.args)) + list(n.kwargs):
                    child = w.get(j)
                    if child is not None and child not in seed_edges.get((parent, slot), ()) and (
                            child in seed_keys or child in self.calls):
                        todo.append((parent, slot, child))
            else:
                for slot, j in list(enumerate(n.args)) + list(n.kwargs):
                    child = w.get(j)
                    if child is not None and child in seed_keys:
                        todo.append((parent, slot, child))
        for parent, slot, child in todo:  # seed e-nodes in a place where the seed differs, maybe
            if parent < 0 or parent in seed_keys:
                was = seed_edges.get((parent, slot), set())
            else:  # under a new e-node: what seed e-nodes of the same e-class have there, and
                # what the rule that built it built there (its rhs's argument, if a call)
                was = kids_in.get((cls[parent], cls[child]), set()) | self._built_by(
                    made.get(parent), cls[child])
            if not was or child in was:
                continue  # as in the seed (or nothing to compare with)
            gone = sorted(was)
            # a seed e-node where the seed had another one: their e-classes were merged by a rule;
            # the most direct record of it, in this order: the rule that (re)built the chosen
            # e-node; a bare-variable rule that matched the replaced one, or the chosen one (an
            # unrolled cycle: x.t().t() -> x, then x.t().t().t().t()); the rule that rebuilt the
            # replaced one (relu(relu(x)) -> relu(x), then relu(relu(relu(x))))
            # A new e-node chosen under a seed e-node (the rule that built it is credited above) came
            # into the seed's e-class by a merge: a bare-variable rule that matched it is the record
            # (`relu(x) -> relu(x.to(float64).to(float32))`, renamed to `x.double().float()`, which
            # `x.double().float() -> x` merges with x: the float32-only rule is credited, not only the
            # renamings; where the e-node was in that class already, this credits one rule too many)
            new_child = child not in seed_keys
            for names in ([] if new_child else [made.get(child)],
                          list(matched.get(child, ())) if new_child else [],
                          [m for d in gone for m in matched.get(d, ())],
                          list(matched.get(child, ())),
                          [made.get(d) for d in gone]):
                names = [n for n in names if n]
                if names:
                    for n in names:
                        credit(n)
                    break
        order = {n: k for k, n in enumerate(found)}
        return sorted(found, key=lambda n: (NUMERICS_ORDER.get(self.numerics.get(n, "exact"), 2), order[n]))


def read_credit(frozen, eg, numerics: dict | None = None) -> Credit:
    """A `Credit` from a frozen e-graph (`eg.freeze()`; `eg` converts String values)."""
    lookup: dict = {}
    classes: list = []
    calls: set = set()
    made: dict = {}
    matched: dict = {}
    fns = frozen.functions
    ids: dict = {}  # egglog value -> a small int (faster to hash than the value)

    def cids(vals) -> tuple:
        out = []
        for v in vals:
            i = ids.get(v)
            if i is None:
                i = ids[v] = len(ids)
            out.append(i)
        return tuple(out)

    def add(key, out) -> int:
        e = lookup.get(key)
        if e is None:
            e = lookup[key] = len(classes)
            classes.append(cids((out,))[0])
        return e

    for short in ("input", "lit", "nil", "cons", "kw", "seq"):
        f = fns.get(term_fn(short))
        if f is None:
            continue
        for row in f.rows:
            ins = row.inputs
            if short in ("input", "lit", "kw", "seq"):
                add((short, eg.value_to_string(ins[0]), cids(ins[1:])), row.output)
            else:
                add((short, "", cids(ins)), row.output)
    provenance = []
    for name, f in fns.items():
        if name.startswith((MADE, MATCHED)):
            provenance.append((name, f))
            continue
        call = parse_call_fn(name)
        if call is None:
            continue
        for row in f.rows:
            calls.add(add(("call", call[0], cids(row.inputs)), row.output))
    for name, f in provenance:  # after the e-nodes: every row names one of them
        call = parse_call_fn(name[len(MADE):])
        if call is None:
            continue
        for row in f.rows:
            if name.startswith(MADE):
                e = lookup.get(("call", call[0], cids(row.inputs)))
                if e is not None:
                    made[e] = eg.value_to_string(row.output)
            else:
                e = lookup.get(("call", call[0], cids(row.inputs[:-1])))
                if e is not None:
                    matched.setdefault(e, set()).add(eg.value_to_string(row.inputs[-1]))
    return Credit(lookup, classes, calls, made, {k: sorted(v) for k, v in matched.items()},
                  dict(numerics or {}))


class FreezeOnce:
    """An EGraph stand-in whose `freeze()` is computed once: `read_egraph` and `read_credit`
    then share one frozen copy of the e-graph."""

    def __init__(self, eg):
        self._eg = eg
        self._frozen = None

    def freeze(self):
        if self._frozen is None:
            self._frozen = self._eg.freeze()
        return self._frozen

    def __getattr__(self, name):
        return getattr(self._eg, name)


__all__ = ["Credit", "FreezeOnce", "actions", "declarations", "made_calls", "matched_call", "read_credit"]
