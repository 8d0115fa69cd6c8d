"""Extract many distinct, DAG-aware variants from a saturated e-graph (uniform or near-original).

egglog's own `extract_multiple` varies only the root node, so the e-graph is read out per
e-class through its frozen form (an internal API: egglog is pinned exactly) and sampled here.
A variant is a choice of one e-node per reachable e-class, so an e-class used twice stays one
node. Cycles are avoided by never choosing an e-node whose child is on the current path; a
min-height choice (children strictly lower) is the fallback that always terminates.
"""
from __future__ import annotations

import math
import random
import sys
import threading
from dataclasses import dataclass, field

from eqsat_test.lowering.program import INPUT, LIT, SEQ, PNode, Program, ProgramBuilder
from eqsat_test.rewrite.provenance import MADE
from eqsat_test.rewrite.terms import parse_call_fn, term_fn

_FNS = ("input", "lit", "nil", "cons", "kw", "seq")  # and "call": one constructor per target


@dataclass(frozen=True)
class ENode:
    fn: str  # one of _FNS, or "call"
    prim: str  # the String argument (name/source/kind) or a call's target, "" for nil/cons
    children: tuple[int, ...]  # a call's: its positional arguments, then its kwargs list


@dataclass
class EClassGraph:
    """The e-graph as plain Python: class id -> e-nodes; the root class; original choices."""

    classes: dict[int, list[ENode]]
    root: int
    original: dict[int, int]  # class -> index of the original e-node in classes[c]
    height: dict[int, int]
    lowest: dict[int, list[int]] = field(default_factory=dict)  # class -> min-height nodes (a cache)
    made_by: dict[tuple[int, int], str] = field(default_factory=dict)  # (class, node index) -> the rule that built it

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def num_enodes(self) -> int:
        return sum(len(v) for v in self.classes.values())

    def log10_choices(self) -> float:
        """log10 of the number of e-node choice functions over reachable classes (an upper
        bound on the number of distinct variants; cyclic choices are not excluded)."""
        return sum(math.log10(len(v)) for v in self.classes.values() if v)


def read_egraph(eg, root_name: str, program: Program, node_names: dict[int, str]) -> EClassGraph:
    frozen = eg.freeze()  # eg: an egglog.bindings.EGraph
    b = eg
    ids: dict = {}

    def cid(v) -> int:
        i = ids.get(v)
        if i is None:
            i = ids[v] = len(ids)
        return i

    classes: dict[int, list[ENode]] = {}
    lookup: dict[tuple, int] = {}
    fns = frozen.functions
    for short in _FNS:
        f = fns.get(term_fn(short))
        if f is None:
            continue
        for row in f.rows:
            ins = row.inputs
            if short in ("input", "lit", "kw", "seq", "call"):
                prim = b.value_to_string(ins[0])
                kids = tuple(cid(v) for v in ins[1:])
            else:
                prim, kids = "", tuple(cid(v) for v in ins)
            node = ENode(short, prim, kids)
            out = cid(row.output)
            classes.setdefault(out, []).append(node)
            lookup[(short, prim, kids)] = out
    for name, f in fns.items():
        call = parse_call_fn(name)
        if call is None:
            continue
        for row in f.rows:
            kids = tuple(cid(v) for v in row.inputs)
            out = cid(row.output)
            classes.setdefault(out, []).append(ENode("call", call[0], kids))
            lookup[("call", call[0], kids)] = out
    made_rows: dict[tuple, str] = {}  # provenance (rewrite/provenance.py): call e-node -> the rule that built it
    for name, f in fns.items():
        call = parse_call_fn(name[len(MADE):]) if name.startswith(MADE) else None
        for row in (f.rows if call is not None else ()):
            made_rows[("call", call[0], tuple(cid(v) for v in row.inputs))] = b.value_to_string(row.output)
    for lst in classes.values():  # deterministic order, independent of egglog's row order
        lst.sort(key=lambda n: (n.fn, n.prim, n.children))
    root_rows = fns[root_name].rows  # let names carry egglog's "$" already
    root = cid(root_rows[0].output)
    original = _original_choices(program, classes, lookup)
    height = _heights(classes)
    reach = _reachable(classes, root)
    classes = {c: classes[c] for c in reach}
    made_by = {(c, i): made_rows[(n.fn, n.prim, n.children)] for c, lst in classes.items()
               for i, n in enumerate(lst) if (n.fn, n.prim, n.children) in made_rows}
    return EClassGraph(classes, root, {c: i for c, i in original.items() if c in classes},
                       {c: height[c] for c in reach}, made_by=made_by)


def _original_choices(program: Program, classes, lookup) -> dict[int, int]:
    """Class -> index of the e-node the original program used (found by re-walking it)."""
    choice: dict[int, int] = {}
    cls_of: dict[int, int] = {}

    def note(key) -> int:
        c = lookup[key]
        node = ENode(*key)
        choice.setdefault(c, classes[c].index(node))
        return c

    def lst(items) -> int:
        c = note(("nil", "", ()))
        for x in reversed(items):
            c = note(("cons", "", (x, c)))
        return c

    for i, n in enumerate(program.nodes):
        try:
            if n.kind == INPUT:
                c = note(("input", n.name, ()))
            elif n.kind == LIT:
                c = note(("lit", n.name, ()))
            elif n.kind == SEQ:
                c = note(("seq", n.name, (lst([cls_of[a] for a in n.args]),)))
            else:
                kws = [note(("kw", k, (cls_of[v],))) for k, v in n.kwargs]
                c = note(("call", n.name, tuple(cls_of[a] for a in n.args) + (lst(kws),)))
        except KeyError:  # a node not reachable from the output was not registered
            continue
        cls_of[i] = c
    return choice


def _heights(classes) -> dict[int, int]:
    """Per class, the least height of a term it can produce (leaves 0; cycles only: 1 << 30).

    Knuth's generalisation of Dijkstra (heights are final in increasing order, and a node's
    height is 1 + its highest child's), O(e-nodes log classes); a fixpoint sweep over all
    classes needs one sweep per level and took 17 s on a 1,000-op program."""
    import heapq

    inf = 1 << 30
    parents: dict[int, list[tuple[int, int]]] = {}
    pending: dict[tuple[int, int], int] = {}
    heap: list[tuple[int, int]] = []
    for c, nodes in classes.items():
        for i, n in enumerate(nodes):
            kids = set(n.children)
            if not kids:
                heap.append((0, c))
                continue
            pending[(c, i)] = len(kids)
            for k in kids:
                parents.setdefault(k, []).append((c, i))
    heapq.heapify(heap)
    h: dict[int, int] = {}
    while heap:
        d, c = heapq.heappop(heap)
        if c in h:
            continue
        h[c] = d
        for p in parents.get(c, ()):
            if p[0] in h:
                continue
            pending[p] -= 1
            if pending[p] == 0:  # c was its last (so highest) child to be final
                heapq.heappush(heap, (d + 1, p[0]))
    return {c: h.get(c, inf) for c in classes}


def _reachable(classes, root) -> set[int]:
    seen, stack = set(), [root]
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        for n in classes.get(c, ()):
            stack.extend(n.children)
    return seen


def _node_height(g: EClassGraph, n: ENode) -> int:
    return 1 + max((g.height[k] for k in n.children), default=-1)


class _Sampler:
    """One random choice per (e-class, level). A node whose child is on the current path would
    close a cycle; instead of rejecting it, the child may be re-entered one level deeper (a
    fresh copy of that class), which is how introduction rewrites such as `x -> x * 1.0` or
    `x -> x.t().t()` become visible. Levels are bounded, so sampling always terminates."""

    def __init__(self, g: EClassGraph, rng: random.Random, mode: str, mutation: float, max_steps: int,
                 max_level: int = 2, unroll: float = 0.5, weight=None):
        self.g, self.rng, self.mode, self.mutation = g, rng, mode, mutation
        self.max_steps, self.max_level, self.unroll = max_steps, max_level, unroll
        self.weight = weight  # (class, node index) -> a positive weight: a weighted order instead of a shuffle
        self.base: dict[int, int] = {}  # mode "mutate": class -> the base variant's node
        self.sites: dict[int, int] = {}  # mode "mutate": class -> the node that replaces the base's

    def lowest(self, c: int) -> list[int]:
        """Indices of class c's min-height nodes (their children are strictly lower)."""
        low = self.g.lowest.get(c)
        if low is None:
            h, nodes = self.g.height[c], self.g.classes[c]
            low = self.g.lowest[c] = [i for i in range(len(nodes)) if _node_height(self.g, nodes[i]) <= h]
        return low

    def order(self, c: int, safe: bool) -> tuple[list[int], bool]:
        """Candidate node indices, and whether this class keeps its original node first."""
        nodes = self.g.classes[c]
        if safe:  # min-height nodes only: children strictly lower, so no cycle is possible
            return self.lowest(c), True
        if self.mode == "mutate":  # the base's choices, but a site's node at its class's first visit (`mutant`)
            site = self.sites.pop(c, None)
            first = site if site is not None else self.base.get(c)
            if first is None:  # a class new to the base: its smallest terms first
                first = self.lowest(c)[0] if len(self.lowest(c)) == 1 else self.rng.choice(self.lowest(c))
            return [first] + [i for i in range(len(nodes)) if i != first], site is None
        if len(nodes) == 1:  # (shuffling one item draws no random number: same stream)
            idx = [0]
        elif self.weight is not None:  # a weighted random order (Efraimidis-Spirakis keys u^(1/w))
            w = self.weight
            idx = sorted(range(len(nodes)), key=lambda i: -math.log(1.0 - self.rng.random()) / w(c, i))
        else:
            idx = list(range(len(nodes)))
            self.rng.shuffle(idx)
        keep = self.mode == "near-original" and c in self.g.original and self.rng.random() >= self.mutation
        if keep and len(idx) > 1:
            o = self.g.original[c]
            idx.remove(o)
            idx.insert(0, o)
        return idx, keep

    def sample(self, safe: bool) -> dict | None:
        choice: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}
        on_path: set[tuple[int, int]] = set()
        steps = [0]

        done: dict[int, tuple[int, int]] = {}  # class -> a finished (class, level) to reuse
        max_level = self.max_level

        def visit(c: int, level: int) -> tuple[int, int] | None:
            """Choose for class c at `level`; returns the key used (a finished choice of c at
            any level is reused: it is a complete acyclic subtree, so sharing it is safe)."""
            if c in done:
                return done[c]
            steps[0] += 1
            if steps[0] > self.max_steps:
                raise _GiveUp
            on_path.add((c, level))
            order, keep = self.order(c, safe)
            nodes = self.g.classes[c]
            for i in order:
                node = nodes[i]
                levels = []
                ok = same = True
                for k in node.children:
                    lv = level
                    while (k, lv) in on_path:  # re-enter k one level deeper, up to max_level
                        if lv >= max_level:
                            ok = False
                            break
                        lv += 1
                    if not ok:
                        break
                    same = same and lv == level
                    levels.append(lv)
                if not ok:
                    continue
                if not same and (safe or keep or self.rng.random() >= self.unroll):
                    continue
                keys = []
                for k, lv in zip(node.children, levels):
                    key = visit(k, lv)
                    if key is None:
                        break
                    keys.append(key)
                else:
                    choice[(c, level)] = (i, tuple(lv for _, lv in keys))
                    on_path.discard((c, level))
                    if c not in done and not any(k == c for k, _ in keys):
                        done[c] = (c, level)
                    return (c, level)
            on_path.discard((c, level))
            if safe:
                return None
            return least(c)

        def least(c: int) -> tuple[int, int]:
            """A min-height term for class c at level -1, where every choice is min-height:
            children are strictly lower, so it is acyclic whatever the current path holds.
            Falling back to it, instead of backtracking, keeps a sample linear in the e-graph
            (a dense 200-op e-graph: 0.6 s per sample, often failing, down to milliseconds)."""
            if c in done:
                return done[c]
            low = self.lowest(c)
            i = low[0] if len(low) == 1 else self.rng.choice(low)
            keys = [least(k) for k in self.g.classes[c][i].children]
            choice[(c, -1)] = (i, tuple(lv for _, lv in keys))
            done[c] = (c, -1)
            return done[c]

        try:
            return choice if visit(self.g.root, 0) is not None else None
        except _GiveUp:
            return None


class _GiveUp(Exception):
    pass


def base_classes(g: EClassGraph, base: dict[int, int]) -> list[int]:
    """The classes the term `base` (class -> node; the smallest terms elsewhere) reaches from the root."""
    seen, stack, out = set(), [g.root], []
    while stack:
        c = stack.pop()
        if c in seen or c not in g.classes:
            continue
        seen.add(c)
        out.append(c)
        i = base.get(c)
        if i is None:
            low = g.height[c]
            i = next((j for j, n in enumerate(g.classes[c]) if _node_height(g, n) <= low), 0)
        stack.extend(g.classes[c][i].children)
    return sorted(out)


def mutant(g: EClassGraph, base: dict[int, int], sites: dict[int, int], rng: random.Random,
           max_ops: int | None = None) -> tuple[Program, frozenset] | None:
    """The variant that is `base` (class -> node index, e.g. the original) with each site's class
    (class -> node index) taking the site's node: one rewrite (or a few) away from the base; classes
    the base never chose take their smallest terms. Returns (program, the (class, node) pairs chosen
    over the original), or None."""
    s = _Sampler(g, rng, "mutate", 0.0, 50 * max(1, g.num_classes), unroll=1.0)  # a site may always unroll
    s.base, s.sites = base, dict(sites)
    got: list = []

    def run() -> None:
        got.append(s.sample(safe=False))

    _with_deep_stack(run)
    choice = got[0]
    if choice is None:
        return None
    p = to_program(g, choice)
    if max_ops is not None and p.num_ops > max_ops:
        return None
    return p, frozenset((c, i) for (c, _), (i, _) in choice.items() if g.original.get(c) != i)


def to_program(g: EClassGraph, choice: dict) -> Program:
    """The program a choice describes (post-order, so indices refer backwards)."""
    b = ProgramBuilder()
    done: dict[tuple[int, int], int] = {}

    classes = g.classes

    def items(key) -> list[tuple[int, int]]:
        """The (class, level) keys of a cons list's elements."""
        out: list = []
        while True:
            i, lv = choice[key]
            n = classes[key[0]][i]
            if n.fn == "nil":
                return out
            out.append((n.children[0], lv[0]))
            key = (n.children[1], lv[1])

    def c_of(key) -> int:
        r = done.get(key)
        if r is not None:
            return r
        i, lv = choice[key]
        n = classes[key[0]][i]
        if n.fn == "input":
            r = b.add(PNode(INPUT, n.prim))
        elif n.fn == "lit":
            r = b.add(PNode(LIT, n.prim))
        elif n.fn == "seq":
            r = b.seq(n.prim, [c_of(k) for k in items((n.children[0], lv[0]))])
        elif n.fn == "call":
            args = [c_of((k, kl)) for k, kl in zip(n.children[:-1], lv[:-1])]
            kws = []
            for kk in items((n.children[-1], lv[-1])):
                ki, klv = choice[kk]
                kn = classes[kk[0]][ki]
                kws.append((kn.prim, c_of((kn.children[0], klv[0]))))
            r = b.call(n.prim, args, kws)
        else:
            raise ValueError(f"unexpected {n.fn} in value position")
        done[key] = r
        return r

    return b.build(c_of((g.root, 0)))


@dataclass
class Extraction:
    variants: list[tuple[Program, str]]  # (program, mode), distinct, the original excluded
    attempts: int
    distinct_seen: int
    log10_space: float
    changed: list[frozenset] = field(default_factory=list)  # per variant: the (class, node) it chose over the original


def extract_variants(g: EClassGraph, n: int, *, seed: int = 0, modes=("uniform", "near-original"),
                     mutation: float = 0.3, max_ops: int | None = None, exclude: set[str] | frozenset[str] = frozenset(),
                     max_attempts: int | None = None, labels=None, pool: int = 3, weight=None,
                     rng: random.Random | None = None, accept=None) -> Extraction:
    """Up to `n` distinct variants, alternating between `modes`; `exclude` holds program keys
    (e.g. the original's) that do not count as variants.

    Stratified extraction: with `labels` (a function program -> set of labels, e.g. the rule
    families that explain its rewrites: `generate.family_labeler`), up to `pool * n` distinct candidates
    are sampled and `n` chosen so that every label found among the candidates shows up in at
    least one chosen variant (rarest labels first), the rest in sampling order.

    `weight((class, node index) -> float)`: each e-class orders its e-nodes by a weighted draw
    instead of a uniform shuffle (coverage-guided extraction, rewrite/guide.py); `rng` continues a
    stream across calls (extraction in rounds). `accept(program) -> bool`: a distinct variant it refuses (one too
    costly to run) is not counted and sampling goes on."""
    rng = rng if rng is not None else random.Random(seed)
    want = n if labels is None else max(n, pool * n)
    max_attempts = max_attempts or 20 * want + 50
    steps = 50 * max(1, g.num_classes)
    seen: set[str] = set(exclude)
    out: list[tuple[Program, str]] = []
    changed: list[frozenset] = []
    attempts = 0

    def run() -> None:
        nonlocal attempts
        while len(out) < want and attempts < max_attempts:
            mode = modes[attempts % len(modes)]
            attempts += 1
            s = _Sampler(g, rng, mode, mutation, steps, weight=weight)
            choice = s.sample(safe=False) or s.sample(safe=True)
            if choice is None:
                continue
            p = to_program(g, choice)
            if max_ops is not None and p.num_ops > max_ops:
                continue
            k = p.key()
            if k in seen:
                continue
            seen.add(k)
            if accept is not None and not accept(p):
                continue
            out.append((p, mode))
            changed.append(frozenset((c, i) for (c, _), (i, _) in choice.items() if g.original.get(c) != i))

    _with_deep_stack(run)
    distinct = len(seen - set(exclude))
    if labels is not None and len(out) > n:
        keep = stratified_choice(list(range(len(out))), n, [labels(p) for p, _ in out])
        out, changed = [out[i] for i in keep], [changed[i] for i in keep]
    return Extraction(out, attempts, distinct, g.log10_choices(), changed)


def stratified_choice(items: list, n: int, item_labels: list[set]) -> list:
    """`n` of `items` (in their order) covering every label of `item_labels` where possible:
    each label, rarest first, gets the earliest item carrying it unless a chosen item already
    does; the remaining places go to the earliest items not chosen."""
    counts: dict = {}
    for ls in item_labels:
        for lab in ls:
            counts[lab] = counts.get(lab, 0) + 1
    chosen: list[int] = []
    covered: set = set()
    for lab in sorted(counts, key=lambda lab: (counts[lab], str(lab))):
        if len(chosen) >= n:
            break
        if lab in covered:
            continue
        i = next(i for i, ls in enumerate(item_labels) if lab in ls)
        chosen.append(i)
        covered |= item_labels[i]
    rest = [i for i in range(len(items)) if i not in set(chosen)]
    chosen += rest[:n - len(chosen)]
    return [items[i] for i in sorted(chosen)]



def _with_deep_stack(fn) -> None:
    """Run fn in a thread with a large stack: sampling recurses once per e-class on a path."""
    old_limit = sys.getrecursionlimit()
    old_size = threading.stack_size()
    err: list[BaseException] = []

    def target():
        try:
            fn()
        except BaseException as e:  # re-raised in the caller
            err.append(e)

    try:
        sys.setrecursionlimit(max(old_limit, 200_000))
        threading.stack_size(512 * 1024 * 1024)
        t = threading.Thread(target=target)
        t.start()
        t.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if err:
        raise err[0]
