"""Compile rules written in PyTorch into e-graph rewrites: trace both sides, build patterns and facts.

Each rule is traced twice with Dynamo (the same capture used for models), under two
configurations of ranks, dtypes and scalar values its preconditions allow. Literals that differ
between the traces are the rule's scalar variables; the rank and dtype of every node the rhs
creates are expressed through the variables' facts wherever both traces agree, so that facts
propagate to new terms. The result, a `CompiledRule`, is plain data (cached on disk as JSON).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from lowering.lift import lift_fx
from lowering.program import CALL, INPUT, LIT, SEQ, UID_KW, Program, lit_source
from rewrite.ruledsl import Rule, RuleError, Scalar, Tensor, dtype_of

CACHE_VERSION = 6
# Both traces use the same sizes: only rank and dtype vary (that is what facts are inferred
# from), so literals a rule derives from its inputs' shapes stay constant across the traces.
_SIZES = (3, 4, 5, 2)


@dataclass(frozen=True)
class CompiledRule:
    name: str
    family: str
    numerics: str
    lhs: tuple  # pattern tree (see _tree)
    rhs: tuple
    tensor_vars: dict  # var -> {"ranks": [...], "dtypes": [...]}
    scalar_vars: dict  # var -> kind
    tags: tuple
    direction: str  # "forward" or "backward" (the reverse of a bidirectional rule)

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @staticmethod
    def from_json(d: dict) -> "CompiledRule":
        return CompiledRule(**{**d, "lhs": _tuplify(d["lhs"]), "rhs": _tuplify(d["rhs"]),
                               "tags": tuple(d["tags"])})

    def ops(self) -> set[str]:
        return pattern_ops(self.lhs) | pattern_ops(self.rhs)


def _tuplify(x):
    return tuple(_tuplify(i) for i in x) if isinstance(x, list) else x


def pattern_calls(t) -> set[tuple[str, int]]:
    """The (target, number of positional arguments) pairs of a pattern's calls."""
    out: set[tuple[str, int]] = set()
    stack = [t]
    while stack:
        t = stack.pop()
        if t[0] == "call":
            out.add((t[1], len(t[2])))
            stack += list(t[2]) + [v for _, v in t[3]]
        elif t[0] == "seq":
            stack += list(t[2])
    return out


def pattern_ops(t) -> set[str]:
    """The call targets of a pattern."""
    return {target for target, _ in pattern_calls(t)}


def _example(spec: Tensor, which: int, gen: torch.Generator) -> torch.Tensor:
    ranks, dtypes = spec.ranks, spec.dtypes
    r = ranks[0] if which == 0 else ranks[-1]  # the two traces differ wherever the spec allows
    dt = dtype_of(dtypes[min(which, len(dtypes) - 1)])
    shape = spec.shape if spec.shape is not None else tuple(max(s, spec.min_size) for s in _SIZES[:r])
    if dt == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dt.is_floating_point:
        return torch.randn(shape, generator=gen).to(dt)
    lo = 0 if dt == torch.uint8 else -5
    return torch.randint(lo, 6, shape, generator=gen).to(dt)


_SENTINEL = {"float": (0.3141592653589793, 2.718281828459045), "int": (3, 5)}


def _scalar_values(spec: Scalar) -> tuple:
    if spec.values and len(spec.values) >= 2:
        return spec.values[0], spec.values[1]
    return _SENTINEL.get(spec.kind, (3, 5))


def _trace(rule: Rule, which: int) -> tuple[Program | None, list]:
    """Trace rule.fn under configuration `which` (0 or 1). Returns the program and, per side,
    either the name of the variable that side is (Dynamo leaves such outputs out of the graph)
    or the index of that side among the graph's outputs."""
    gen = torch.Generator().manual_seed(1234 + which)
    kwargs = {}
    for name, spec in rule.params.items():
        if isinstance(spec, Tensor):
            kwargs[name] = _example(spec, which, gen)
        else:
            kwargs[name] = _scalar_values(spec)[which]
    graphs = []

    def backend(gm, ex):
        graphs.append(gm)
        return gm.forward

    fn = rule.fn
    torch._dynamo.reset()
    try:
        out = torch.compile(lambda **kw: fn(**kw), backend=backend, fullgraph=True, dynamic=False)(**kwargs)
    except Exception as e:
        raise RuleError(f"rule {rule.name}: cannot be traced: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuleError(f"rule {rule.name}: must return a pair (lhs, rhs)")
    sides, k = [], 0
    for o in out:
        bare = next((v for v, x in kwargs.items() if x is o), None)
        if bare is None and not isinstance(o, torch.Tensor):
            raise RuleError(f"rule {rule.name}: each side must compute a tensor, got {type(o).__name__}")
        sides.append(("var", bare) if bare is not None else ("out", k))
        k += bare is None
    if not graphs:
        if k:
            raise RuleError(f"rule {rule.name}: traced to no graph")
        return None, sides
    prog = lift_fx(graphs[0]).program
    if len(prog.nodes[prog.output].args) != k:
        raise RuleError(f"rule {rule.name}: a side traces to an alias of an input or to the same "
                        "value as the other side (e.g. x.contiguous() of a contiguous x); "
                        "restate the rule so each side computes its own tensor")
    return prog, sides


def _var_name(input_name: str) -> str:
    # Dynamo names placeholders l_<arg>_ for argument <arg>; kwargs-lambdas give l_kw_<arg>_
    n = input_name
    for pre in ("l_kw_", "l_"):
        if n.startswith(pre):
            n = n[len(pre):]
            break
    return n[:-1] if n.endswith("_") else n


def _tree(pa: Program, pb: Program, ia: int, ib: int, rule: Rule):
    """The pattern tree at node ia (trace A) / ib (trace B), walked in parallel."""
    na, nb = pa.nodes[ia], pb.nodes[ib]
    if na.kind != nb.kind or (na.kind in (CALL, SEQ, INPUT) and na.name != nb.name) or len(na.args) != len(nb.args):
        raise RuleError(f"rule {rule.name}: traces differ in structure between preconditions "
                        f"({na.name} vs {nb.name}); make the rule rank/dtype specific")
    if na.kind == INPUT:
        v = _var_name(na.name)
        if v not in rule.params:
            raise RuleError(f"rule {rule.name}: unexpected input {na.name}")
        return ("var", v)
    if na.kind == LIT:
        if na.name != nb.name:
            for v, spec in rule.params.items():
                if isinstance(spec, Scalar):
                    a, b = _scalar_values(spec)
                    if na.name == lit_source(a) and nb.name == lit_source(b):
                        return ("svar", v)
            raise RuleError(f"rule {rule.name}: literal {na.name} changes with the inputs' "
                            f"rank/dtype ({nb.name}); make the rule rank specific")
        return ("lit", na.name)
    if na.kind == SEQ:
        return ("seq", na.name, tuple(_tree(pa, pb, a, b, rule) for a, b in zip(na.args, nb.args)))
    if [k for k, _ in na.kwargs] != [k for k, _ in nb.kwargs]:
        raise RuleError(f"rule {rule.name}: keyword arguments differ between traces")
    if any(k == UID_KW for k, _ in na.kwargs):
        raise RuleError(f"rule {rule.name}: random or in-place ops cannot appear in rules")
    args = tuple(_tree(pa, pb, a, b, rule) for a, b in zip(na.args, nb.args))
    kwargs = tuple((k, _tree(pa, pb, va, vb, rule)) for (k, va), (_, vb) in zip(na.kwargs, nb.kwargs))
    return ("call", na.name, args, kwargs, _facts_for(pa, pb, ia, ib, rule))


def _facts_for(pa: Program, pb: Program, ia: int, ib: int, rule: Rule):
    ma, mb = pa.meta[ia], pb.meta[ib]
    if ma is None or mb is None:
        return (None, None)
    # Only the variables this node depends on can explain its facts, and only when there is one
    # of them: with several, type promotion and broadcasting (mixed dtypes or ranks in a real
    # graph) can make "same as x" wrong, so only facts that are constant are kept then.
    below = _inputs_below(pa, ia)
    var_meta = []
    for i, n in enumerate(pa.nodes):
        if n.kind == INPUT and i in below and len(below) == 1:
            j = next(j for j, m in enumerate(pb.nodes) if m.kind == INPUT and m.name == n.name)
            if pa.meta[i] is not None and pb.meta[j] is not None:
                var_meta.append((_var_name(n.name), pa.meta[i], pb.meta[j]))
    # Prefer variables whose rank/dtype differ between the traces: agreement then means something.
    var_meta.sort(key=lambda t: (t[1].rank == t[2].rank, t[1].dtype == t[2].dtype))
    rank_src = None
    for v, a, b in var_meta:
        if ma.rank - a.rank == mb.rank - b.rank:
            rank_src = ("var", v, ma.rank - a.rank)
            break
    if rank_src is None and ma.rank == mb.rank:
        rank_src = ("const", ma.rank)
    dtype_src = None
    for v, a, b in sorted(var_meta, key=lambda t: t[1].dtype == t[2].dtype):
        if ma.dtype == a.dtype and mb.dtype == b.dtype:
            dtype_src = ("var", v)
            break
    if dtype_src is None and ma.dtype == mb.dtype:
        dtype_src = ("const", ma.dtype)
    return (rank_src, dtype_src)


def _inputs_below(p: Program, i: int) -> set[int]:
    seen, stack, out = set(), [i], set()
    while stack:
        j = stack.pop()
        if j in seen:
            continue
        seen.add(j)
        n = p.nodes[j]
        if n.kind == INPUT:
            out.add(j)
        stack.extend(n.args)
        stack.extend(v for _, v in n.kwargs)
    return out


def _pattern_vars(t) -> set[str]:
    if t[0] in ("var", "svar"):
        return {t[1]}
    if t[0] == "seq":
        return set().union(*[_pattern_vars(a) for a in t[2]]) if t[2] else set()
    if t[0] == "call":
        s = set()
        for a in t[2]:
            s |= _pattern_vars(a)
        for _, v in t[3]:
            s |= _pattern_vars(v)
        return s
    return set()


def compile_rule(rule: Rule) -> list[CompiledRule]:
    (pa, sa), (pb, sb) = _trace(rule, 0), _trace(rule, 1)
    if sa != sb:
        raise RuleError(f"rule {rule.name}: traces differ between preconditions")

    def side(s):
        if s[0] == "var":
            return ("var", s[1])
        return _tree(pa, pb, pa.nodes[pa.output].args[s[1]], pb.nodes[pb.output].args[s[1]], rule)

    lhs, rhs = side(sa[0]), side(sa[1])
    if lhs == rhs:
        raise RuleError(f"rule {rule.name}: both sides trace to the same term")
    lv, rv = _pattern_vars(lhs), _pattern_vars(rhs)
    if not rv <= lv:
        raise RuleError(f"rule {rule.name}: rhs uses variables {sorted(rv - lv)} not bound by the lhs")
    if rule.bidirectional and lv != rv:
        raise RuleError(f"rule {rule.name}: bidirectional rules need the same variables on both sides")
    if rule.bidirectional and (lhs[0] == "var" or rhs[0] == "var"):
        raise RuleError(f"rule {rule.name}: a side that is a bare variable cannot be bidirectional")
    if lhs[0] == "svar" or rhs[0] == "svar":
        raise RuleError(f"rule {rule.name}: a side cannot be a bare scalar")
    tvars = {v: {"ranks": list(s.ranks) if s.rank is not None or s.shape is not None else None,
                 "dtypes": list(s.dtypes)}
             for v, s in rule.params.items() if isinstance(s, Tensor) and v in lv}
    svars = {v: s.kind for v, s in rule.params.items() if isinstance(s, Scalar) and v in lv}
    base = dict(name=rule.name, family=rule.family, numerics=rule.numerics, tensor_vars=tvars,
                scalar_vars=svars, tags=tuple(rule.tags))
    out = [CompiledRule(lhs=lhs, rhs=rhs, direction="forward", **base)]
    if rule.bidirectional:
        out.append(CompiledRule(lhs=rhs, rhs=lhs, direction="backward", **base))
    return out


def _cache_dir() -> Path:
    root = os.environ.get("EQSAT_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "eqsat-test")
    return Path(root)


def _rule_key(rule: Rule) -> str:
    h = hashlib.sha256()
    h.update(f"{CACHE_VERSION}|{torch.__version__}|{rule.name}|{rule.family}|{rule.numerics}|"
             f"{rule.bidirectional}|{rule.tags}|{rule.params!r}|{rule.source_hash()}".encode())
    return h.hexdigest()[:24]


def compile_rules(rules: list[Rule], *, use_cache: bool = True) -> tuple[list[CompiledRule], list[str]]:
    """Compile every rule (cached by rule source and torch version); returns (compiled, errors)."""
    cache_file = _cache_dir() / f"compiled-rules-{CACHE_VERSION}.json"
    cache: dict = {}
    if use_cache and cache_file.is_file():
        try:
            cache = json.loads(cache_file.read_text())
        except (OSError, json.JSONDecodeError):
            cache = {}
    compiled: list[CompiledRule] = []
    errors: list[str] = []
    dirty = False
    for r in rules:
        key = _rule_key(r)
        if key in cache:
            compiled += [CompiledRule.from_json(d) for d in cache[key]]
            continue
        try:
            crs = compile_rule(r)
        except RuleError as e:
            errors.append(str(e))
            continue
        compiled += crs
        cache[key] = [c.to_json() for c in crs]
        dirty = True
    if dirty and use_cache:
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(cache))
            tmp.replace(cache_file)
        except OSError:
            pass
    torch._dynamo.reset()
    return compiled, errors

