"""Which of Inductor's decisions a program reaches: its pattern-matcher replacements, and its extern/fallback kernels.

Inductor decides much by pattern: passes such as fx_passes/joint_graph.py and post_grad.py hold
`PatternMatcherPass` registries whose entries (a search graph and a replacement) are read here
(`registry()`), named by their handler or search function ("joint_graph.div_softmax_pattern",
"fuse_attention._sfdp_pattern_1"). `reach(fn, args)` compiles `fn` with Inductor (every cache off:
a cache hit skips the passes) and returns the patterns that matched, counted per entry and per
the dtypes of the values they bound ("joint_graph.div_softmax_pattern(inp=int8)"), and the extern
and fallback kernels the generated code calls ("extern_kernels.mm", "aten.sort"): the other half
of the decision, a decomposition or lowering versus a library kernel.

`rule_reach(rule)` does this for each side of a rewrite rule (traced as in `rules check`), so a
rule's tags can be checked: `builds:<pattern>` (its right side matches a pattern more often than
its left), `breaks:<pattern>` (less often), `flips:<kernel>` (one side calls the kernel, the other
does not).
"""
from __future__ import annotations

import fnmatch
import gc
import inspect
import re
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.fx

from eqsat_test.rewrite.ruledsl import Rule

_PASSES_PREFIX = "torch._inductor."
_lock = threading.Lock()
_names: dict[int, str] = {}  # id(entry) -> pattern name
_counting: list[Counter] = []  # the innermost counting context's counters


def _short(module: str, name: str) -> str:
    m = module[len(_PASSES_PREFIX):] if module.startswith(_PASSES_PREFIX) else module
    return f"{m.replace('fx_passes.', '')}.{name}"


def entry_name(entry) -> str:
    """A registry entry's name: its handler's, its pattern's, or its search function's."""
    h = getattr(entry, "handler", None)
    if h is not None:
        return _short(getattr(h, "__module__", "") or "", getattr(h, "__name__", type(h).__name__))
    if getattr(entry, "pattern_name", None):
        return entry.pattern_name
    check = getattr(entry, "extra_check", None)
    code, cells = getattr(check, "__code__", None), getattr(check, "__closure__", None) or ()
    if code is not None:
        free = dict(zip(code.co_freevars, cells))
        for var in ("search_fn", "pattern"):
            try:
                fn = free[var].cell_contents
            except (KeyError, ValueError):
                continue
            if inspect.isfunction(fn):
                return _short(fn.__module__, fn.__name__)
    root = getattr(getattr(entry, "pattern", None), "fns", None) or ["?"]
    return f"{type(entry).__name__}({getattr(root[0], '__name__', root[0])})"


def _passes() -> list:
    from torch._inductor.fx_passes import joint_graph, post_grad
    from torch._inductor.pattern_matcher import PatternMatcherPass
    joint_graph.lazy_init()  # registers fuse_attention, pad_mm, misc patterns, ...
    post_grad.lazy_init()
    out = []
    for o in gc.get_objects():
        try:
            if isinstance(o, PatternMatcherPass):
                out.append(o)
        except ReferenceError:  # a weak proxy whose object is gone
            continue
    return out


@dataclass(frozen=True)
class Pattern:
    """One named replacement of Inductor's registries (several entries may share a name: one per root
    target spelling or per variant of the search graph)."""

    name: str
    entries: int
    roots: tuple[str, ...]  # the targets of its search graphs' roots

    def to_dict(self) -> dict:
        return {"name": self.name, "entries": self.entries, "roots": list(self.roots)}

    @classmethod
    def from_dict(cls, d: dict) -> "Pattern":
        return cls(d["name"], d["entries"], tuple(d["roots"]))


def registry() -> dict[str, Pattern]:
    """Every named pattern of this torch's pattern-matcher passes."""
    entries: dict[str, list] = {}
    roots: dict[str, set] = {}
    for p in _passes():
        for (_, target), lst in list(p.patterns.items()):
            for e in lst:
                n = entry_name(e)
                entries.setdefault(n, []).append(e)
                roots.setdefault(n, set()).add(str(target))
    return {n: Pattern(n, len(es), tuple(sorted(roots[n]))) for n, es in sorted(entries.items())}


def _signature(match) -> str:
    """The dtypes of the tensors a match bound, e.g. "inp=int8,other=float32" ("" when none)."""
    parts = []
    for k, v in sorted((getattr(match, "kwargs", None) or {}).items()):
        val = getattr(v, "meta", {}).get("val") if isinstance(v, torch.fx.Node) else None
        if isinstance(val, torch.Tensor):
            parts.append(f"{k}={str(val.dtype).replace('torch.', '')}")
    return ",".join(parts)


def _install() -> None:
    """Wrap the entry classes' `apply` once per process: each application counts in the innermost
    `counting()` context (by name and by name with the bound dtypes)."""
    from torch._inductor import pattern_matcher as pm
    with _lock:
        if getattr(pm, "_eqsat_counting", False):
            return
        for cls in {pm.GraphPatternEntry, pm.LoweringPatternEntry, pm.ReplacementPatternEntry}:
            orig = cls.apply

            def apply(self, match, graph, node, _orig=orig):
                if _counting:
                    name = _names.get(id(self)) or _names.setdefault(id(self), entry_name(self))
                    c = _counting[-1]
                    c[name] += 1
                    sig = _signature(match)
                    if sig:
                        c[f"{name}({sig})"] += 1
                return _orig(self, match, graph, node)

            cls.apply = apply
        pm._eqsat_counting = True


@contextmanager
def counting():
    """Count the pattern applications of the compiles run inside (a Counter, filled as they happen)."""
    _install()
    c: Counter = Counter()
    _counting.append(c)
    try:
        yield c
    finally:
        _counting.remove(c)


_KERNEL = re.compile(r"\b(extern_kernels\.\w+|(?:torch\.ops\.)?aten\.\w+)(?:\.\w+)?\(")


def kernels_of(code: str) -> Counter:
    """The extern and fallback kernels Inductor's generated code calls (comments left out), counted."""
    out: Counter = Counter()
    for line in code.splitlines():
        line = line.split("#", 1)[0]
        for m in _KERNEL.findall(line):
            out[m.replace("torch.ops.aten.", "aten.")] += 1
    return out


@dataclass(frozen=True)
class Reach:
    """What one compile reached: pattern applications (by name, and by name with bound dtypes) and
    the kernels its code calls outside Inductor's own loops."""

    patterns: dict = field(default_factory=dict)
    kernels: dict = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict:
        return {"patterns": dict(self.patterns), "kernels": dict(self.kernels), "error": self.error}

    @classmethod
    def from_dict(cls, d: dict) -> "Reach":
        return cls(dict(d.get("patterns") or {}), dict(d.get("kernels") or {}), d.get("error"))


def reach(fn, args, *, dynamic: bool = False) -> Reach:
    """Compile `fn` with Inductor (caches off), call it on `args`, and say what it reached."""
    import torch._functorch.config as fconfig
    import torch._inductor.config as iconfig
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    try:
        with counting() as c, iconfig.patch(force_disable_caches=True, fx_graph_cache=False), \
                fconfig.patch(enable_autograd_cache=False), torch.no_grad():
            _, codes = run_and_get_code(torch.compile(fn, backend="inductor", dynamic=dynamic), *args)
    except Exception as e:  # noqa: BLE001 - a side Inductor cannot compile: said, not raised
        return Reach(error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300])
    finally:
        torch._dynamo.reset()
    k: Counter = Counter()
    for code in codes:
        k.update(kernels_of(code))
    return Reach(dict(c), dict(k))


def side_modules(rule: Rule, scalars: dict) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule, list[str]]:
    """(lhs, rhs) of `rule` at these scalar values as GraphModules over its tensor variables (in order)."""
    from eqsat_test.rewrite.ruletrace import trace_rule  # the tracing `rules check` uses (same layer)
    sides = trace_rule(rule, scalars)
    if sides.graph is None:
        raise ValueError(f"rule {rule.name}: sides not separable by tracing ({sides.trace_error})")
    names = rule.tensor_vars

    def module(nodes, side) -> torch.fx.GraphModule:
        g = torch.fx.Graph()
        env: dict = {v: g.placeholder(v) for v in names}
        for n in nodes:
            if n.op != "placeholder":
                env[n] = g.node_copy(n, lambda m: env[m.target] if m.op == "placeholder" else env[m])
        g.output(torch.fx.node.map_arg(side, lambda m: env[m.target] if m.op == "placeholder" else env[m]))
        return torch.fx.GraphModule(torch.nn.Module(), g)

    return module(sides.lhs_nodes, sides.lhs), module(sides.rhs_nodes, sides.rhs), names


@dataclass(frozen=True)
class RuleReach:
    """What each side of a rule reaches, on one example of its variables."""

    rule: str
    lhs: Reach
    rhs: Reach
    example: str = ""  # dtypes and shapes of the example

    def built(self) -> set[str]:
        """Patterns (and pattern(dtypes)) the rhs matches more often than the lhs."""
        return {p for p, n in self.rhs.patterns.items() if n > self.lhs.patterns.get(p, 0)}

    def broken(self) -> set[str]:
        return {p for p, n in self.lhs.patterns.items() if n > self.rhs.patterns.get(p, 0)}

    def flipped(self) -> set[str]:
        """Kernels one side calls and the other does not."""
        return set(self.lhs.kernels) ^ set(self.rhs.kernels)

    def to_dict(self) -> dict:
        return {"rule": self.rule, "lhs": self.lhs.to_dict(), "rhs": self.rhs.to_dict(), "example": self.example}

    @classmethod
    def from_dict(cls, d: dict) -> "RuleReach":
        return cls(d["rule"], Reach.from_dict(d["lhs"]), Reach.from_dict(d["rhs"]), d.get("example", ""))


CONTEXTS = {  # `reach:<name>` tags: what a rule's sides are measured under (the pattern spans more than the rule)
    "softmax": lambda y: torch.softmax(y, -1),
}


def _examples(rule: Rule, seed: int, tries: int):
    """Up to `tries` examples (variables -> values) on which both sides run, plain values first."""
    from eqsat_test.rewrite.rulecheck import sample_outcomes  # the sampler of `rules check` (same layer)
    plain: list = []
    special: list = []
    for o in sample_outcomes(rule, seed, 16 * tries):
        if o.kind == "ok":
            (special if o.sample.special else plain).append({**o.inputs, **o.sample.scalars})
        if len(plain) >= tries:
            break
    return (plain + special)[:tries]


def rule_reach(rule: Rule, example: dict | None = None, seed: int = 0, tries: int = 4) -> RuleReach:
    """Compile both sides of `rule` on an example of its variables (given, or up to `tries` that `rules
    check` samples, until one shows every claim of its tags), under its `reach:` context."""
    ctx = next((CONTEXTS[t.split(":", 1)[1]] for t in rule.tags if str(t).startswith("reach:")
                and t.split(":", 1)[1] in CONTEXTS), None)
    exs = [example] if example is not None else _examples(rule, seed, tries)
    out = RuleReach(rule.name, Reach(error="no example on which both sides run"),
                    Reach(error="no example on which both sides run"))
    for ex in exs:
        scalars = {k: v for k, v in ex.items() if k in rule.scalar_vars}
        try:
            lhs, rhs, names = side_modules(rule, scalars)
        except ValueError as e:
            return RuleReach(rule.name, Reach(error=str(e)), Reach(error=str(e)))
        if ctx is not None:
            lhs, rhs = (lambda *a, m=lhs: ctx(m(*a))), (lambda *a, m=rhs: ctx(m(*a)))
        args = [ex[v] for v in names]
        desc = ", ".join([f"{v}: {str(ex[v].dtype).replace('torch.', '')}{list(ex[v].shape)}" for v in names]
                         + [f"{k}={v}" for k, v in scalars.items()])
        out = RuleReach(rule.name, reach(lhs, args), reach(rhs, args), desc)
        if not unmet(rule, out):
            break
    return out


def unmet(rule: Rule, rr: RuleReach) -> list[str]:
    """The claims of `rule`'s tags that `rr` does not show (patterns as globs: "_sfdp_pattern_1_*")."""
    c = claimed(rule)
    built, broken, flipped = rr.built(), rr.broken(), rr.flipped()
    out = [f"builds:{p}" for p in sorted(c["builds"]) if not fnmatch.filter(built, p)]
    out += [f"breaks:{p}" for p in sorted(c["breaks"]) if not fnmatch.filter(broken, p)]
    out += [f"flips:{k}" for k in sorted(c["flips"]) if k not in flipped]
    return out


def claimed(rule: Rule) -> dict[str, set[str]]:
    """The rule's tags `builds:P`, `breaks:P`, `flips:K` as {"builds": {...}, "breaks": {...}, "flips": {...}}."""
    out: dict[str, set[str]] = {"builds": set(), "breaks": set(), "flips": set()}
    for t in rule.tags:
        kind, _, what = str(t).partition(":")
        if kind in out and what:
            out[kind].add(what)
    return out
