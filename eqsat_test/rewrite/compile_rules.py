"""Compile rules written in PyTorch into e-graph rewrites: trace both sides, build patterns and facts.

Each rule is traced twice with Dynamo (the same capture used for models), under two
configurations of ranks, dtypes and scalar values its preconditions allow. Literals that differ
between the traces are the rule's scalar variables; the rank and dtype of every node the rhs
creates are expressed through the variables' facts wherever both traces agree, so that facts
propagate to new terms. The result, a `CompiledRule`, is plain data (cached on disk as JSON).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.fx

from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.program import CALL, INPUT, LIT, SEQ, UID_KW, Program, lit_source
from eqsat_test.rewrite.rulecache import (
    CACHE_VERSION,
    cache_dir,
    lock_cache,
    prebuilt_file,
    read_cache,
    read_prebuilt,
    rule_key,
)
from eqsat_test.rewrite.ruledsl import Rule, RuleError, Scalar, Tensor, dtype_of, load_rule_file

# The two traces use different sizes (trace B renames every extent: _B_SIZE) as well as their
# ranks and dtypes: a literal a rule derives from its inputs' shapes (`x.shape[-1]`,
# `1 / math.sqrt(q.size(-1))`) then differs between the traces and is recognised as a *size
# variable* (see SIZE_FNS), which matches the size facts of the e-graph instead of one constant.
# The renaming keeps 1 (broadcasting) and evenness, and no size function of one extent equals
# another extent in both traces, so a size literal's source is not ambiguous.
_SIZES = (3, 4, 5, 2)
_B_SIZE = {1: 1, 2: 12, 3: 6, 4: 8, 5: 10}
# A rule with size literals is traced a third time (C: trace B's ranks, dtypes and scalars, other
# extents); a size literal's source must explain all three traces.
_C_SIZE = {1: 1, 2: 14, 3: 9, 4: 20, 5: 7}

# How a literal may be derived from one extent n of a tensor variable (name -> function). The
# e-graph holds, per tensor and dimension, the literal each function used by a rule gives.
SIZE_FNS = {
    "n": lambda n: n,
    "float": lambda n: float(n),
    "recip": lambda n: 1 / n,
    "rsqrt": lambda n: 1 / math.sqrt(n),
    "pow-0.5": lambda n: n ** -0.5,
    "sqrt": lambda n: math.sqrt(n),
    "sqrt-int": lambda n: n ** 0.5,
    "minus1": lambda n: n - 1,
    "half": lambda n: n // 2,
    "rest": lambda n: n - n // 2,
    "even": lambda n: n - n % 2,
    "twice": lambda n: 2 * n,
    "median_k": lambda n: (n + 1) // 2,
}


def size_literal(fn: str, n: int) -> str:
    """The literal source a size function gives for extent n (as lifting would write it)."""
    return lit_source(SIZE_FNS[fn](n))


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
    # scalar variables bound to a size fact, not matched as free literals:
    # name -> [tensor var, dim, size function] ("_n0" -> ["x", -1, "n"]: x.shape[-1])
    size_vars: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @staticmethod
    def from_json(d: dict) -> "CompiledRule":
        return CompiledRule(**{**d, "lhs": _tuplify(d["lhs"]), "rhs": _tuplify(d["rhs"]),
                               "tags": tuple(d["tags"]),
                               "size_vars": {k: tuple(v) for k, v in d.get("size_vars", {}).items()}})

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
    dt = dtype_of(dtypes[min(which, 1, len(dtypes) - 1)])
    shape = spec.shape if spec.shape is not None else tuple(max(s, spec.min_size) for s in _SIZES[:r])
    if which == 1:  # (3: trace B's ranks and dtypes at trace A's sizes)
        shape = tuple(_B_SIZE.get(s, 2 * s) for s in shape)
    elif which == 2:
        shape = tuple(_C_SIZE.get(s, 3 * s) for s in shape)
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


def _structure_only(gm):
    """A stand-in for the traced graph that returns empty tensors of its outputs' shapes and
    dtypes: only the structure of the result matters here (which side is a bare variable), and
    running the graph could raise on example values the rule's ops reject (class-index targets
    out of range, probabilities outside [0, 1])."""
    outs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
    metas = [n.meta.get("example_value") if isinstance(n, torch.fx.Node) else n for n in outs]
    if any(isinstance(n, torch.fx.Node) and not isinstance(m, torch.Tensor) for n, m in zip(outs, metas)):
        return gm.forward
    return lambda *args: tuple(torch.empty(m.shape, dtype=m.dtype) if isinstance(m, torch.Tensor) else m
                               for m in metas)


def _trace(rule: Rule, which: int) -> tuple[Program | None, list]:
    """Trace rule.fn under configuration `which` (0, 1; 2: 1 with other sizes; 3: 1 with 0's
    sizes). Returns the program and, per side,
    either the name of the variable that side is (Dynamo leaves such outputs out of the graph)
    or the index of that side among the graph's outputs."""
    gen = torch.Generator().manual_seed(1234 + which)
    kwargs = {}
    for name, spec in rule.params.items():
        if isinstance(spec, Tensor):
            kwargs[name] = _example(spec, which, gen)
        else:
            kwargs[name] = _scalar_values(spec)[min(which, 1)]
    graphs = []

    def backend(gm, ex):
        graphs.append(gm)
        return _structure_only(gm)

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


def _tree(pa: Program, pb: Program, ia: int, ib: int, rule: Rule, ctx: dict, ic: int | None = None):
    """The pattern tree at node ia (trace A) / ib (trace B), walked in parallel (and at node ic
    of trace C, `ctx["c"]`, when there is one). `ctx["sizes"]` collects the size variables found:
    (tensor var, dim, size function) -> name."""
    pc = ctx.get("c")
    if pc is not None:
        nc_ = pc.nodes[ic]
        nb_ = pb.nodes[ib]
        if nc_.kind != nb_.kind or len(nc_.args) != len(nb_.args) or (nc_.kind != LIT and nc_.name != nb_.name):
            raise RuleError(f"rule {rule.name}: traces differ in structure between sizes")
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
            found = _size_sources(pa, pb, na.name, nb.name, rule)
            if found and pc is not None:  # trace C: the node at the same place in C's walk
                found = [f for f in found if f in _size_sources(pa, pc, na.name, pc.nodes[ic].name, rule)]
            if found:
                ctx["any_size"] = True
                name = ctx["sizes"].setdefault(found[0], f"_n{len(ctx['sizes'])}")
                return ("svar", name)
            raise RuleError(f"rule {rule.name}: literal {na.name} changes with the inputs' "
                            f"rank/dtype ({nb.name}); make the rule rank specific")
        return ("lit", na.name)
    if na.kind == SEQ:
        cargs = pc.nodes[ic].args if pc is not None else (None,) * len(na.args)
        return ("seq", na.name, tuple(_tree(pa, pb, a, b, rule, ctx, c)
                                      for a, b, c in zip(na.args, nb.args, cargs)))
    if [k for k, _ in na.kwargs] != [k for k, _ in nb.kwargs]:
        raise RuleError(f"rule {rule.name}: keyword arguments differ between traces")
    if any(k == UID_KW for k, _ in na.kwargs):
        raise RuleError(f"rule {rule.name}: random or in-place ops cannot appear in rules")
    nc = pc.nodes[ic] if pc is not None else None
    if nc is not None and [k for k, _ in nc.kwargs] != [k for k, _ in nb.kwargs]:
        raise RuleError(f"rule {rule.name}: traces differ in structure between sizes")
    cargs = nc.args if nc is not None else (None,) * len(na.args)
    ckw = [v for _, v in nc.kwargs] if nc is not None else [None] * len(na.kwargs)
    args = tuple(_tree(pa, pb, a, b, rule, ctx, c) for a, b, c in zip(na.args, nb.args, cargs))
    kwargs = tuple((k, _tree(pa, pb, va, vb, rule, ctx, vc))
                   for (k, va), (_, vb), vc in zip(na.kwargs, nb.kwargs, ckw))
    return ("call", na.name, args, kwargs, _facts_for(pa, pb, ia, ib, rule))


def _input_shapes(p: Program) -> dict[str, tuple]:
    return {_var_name(n.name): p.meta[i].shape for i, n in enumerate(p.nodes)
            if n.kind == INPUT and i < len(p.meta) and p.meta[i] is not None}


def _size_sources(pa: Program, pb: Program, lit_a: str, lit_b: str, rule: Rule) -> list:
    """The (tensor var, dim, size function) triples that explain a literal differing between two
    traces as derived from one extent of a tensor variable, preferred first: the plain extent
    before other functions, earlier variables first, negative dims before positive ones."""
    sa, sb = _input_shapes(pa), _input_shapes(pb)
    out = []
    for fn in SIZE_FNS:
        for v, spec in rule.params.items():
            if not isinstance(spec, Tensor) or v not in sa or v not in sb:
                continue
            ra, rb = len(sa[v]), len(sb[v])
            dims = list(range(-1, -min(ra, rb) - 1, -1)) + list(range(min(ra, rb)))
            for d in dims:
                na, nb = sa[v][d], sb[v][d]
                if na == nb:
                    continue
                try:
                    if size_literal(fn, na) == lit_a and size_literal(fn, nb) == lit_b:
                        out.append((v, d, fn))
                except (ValueError, ZeroDivisionError, TypeError):
                    continue
    return out


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
    pa, sa = _trace(rule, 0)
    try:
        pb, sb = _trace(rule, 1)
    except RuleError:
        # Some ops need an extent to stay what it is (grid_sample's grid ends in 2): trace B at
        # trace A's sizes then. No literal can be told to come from a shape in such a rule.
        pb, sb = _trace(rule, 3)
    if sa != sb:
        raise RuleError(f"rule {rule.name}: traces differ between preconditions")

    ctx: dict = {"sizes": {}}

    def side(s):
        if s[0] == "var":
            return ("var", s[1])
        pc = ctx.get("c")
        ic = pc.nodes[pc.output].args[s[1]] if pc is not None else None
        return _tree(pa, pb, pa.nodes[pa.output].args[s[1]], pb.nodes[pb.output].args[s[1]], rule, ctx, ic)

    lhs, rhs = side(sa[0]), side(sa[1])
    if ctx.get("any_size"):  # confirm each size literal's source on a third trace
        pc, sc = _trace(rule, 2)
        if sc != sb or pc is None:
            raise RuleError(f"rule {rule.name}: traces differ in structure between sizes")
        ctx = {"sizes": {}, "c": pc}
        lhs, rhs = side(sa[0]), side(sa[1])
    if lhs == rhs:
        raise RuleError(f"rule {rule.name}: both sides trace to the same term")
    size_vars = {name: src for src, name in ctx["sizes"].items()}
    lv, rv = _pattern_vars(lhs) - set(size_vars), _pattern_vars(rhs) - set(size_vars)
    for _name, (v, d, _fn) in size_vars.items():
        if v not in lv:
            raise RuleError(f"rule {rule.name}: a literal derived from the shape of {v!r} "
                            f"(dim {d}) needs {v!r} on the lhs")
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
                scalar_vars=svars, tags=tuple(rule.tags), size_vars=size_vars)
    out = [CompiledRule(lhs=lhs, rhs=rhs, direction="forward", **base)]
    if rule.bidirectional:
        out.append(CompiledRule(lhs=rhs, rhs=lhs, direction="backward", **base))
    return out


# Compiling many rules (a cold cache: the built-in library is ~1,400 rules, minutes on one core)
# is spread over a pool of fresh processes, one per core (at most _MAX_JOBS), in small chunks. A
# worker re-loads each rule from its file (rules hold functions, which do not pickle) and checks
# that it is the same rule (same cache key); a rule it cannot load so, or whose compile fails other
# than with a RuleError, is compiled here after the pool, as without one. Same results either way.
_PARALLEL_MIN = 48  # fewer misses: a pool's start-up (torch imported per worker) costs more than it saves
_CHUNK = 8
_MAX_JOBS = 16  # each worker holds its own torch (hundreds of MB)


class _no_guard_profiling:
    """Dynamo times each new guard set (after flushing the CPU cache, only to log the latency): a
    quarter of the cost of tracing a rule. A rule's trace is called once and its guards never run
    again, so that measurement is skipped while rules compile."""

    def __enter__(self):
        try:
            import torch._dynamo.guards as mod
        except ImportError:
            mod = None
        self._mod, self._saved = mod, getattr(mod, "profile_guard_manager", None)
        if self._saved is not None:
            self._mod.profile_guard_manager = lambda *a, **kw: 0.0

    def __exit__(self, *exc):
        if self._saved is not None:
            self._mod.profile_guard_manager = self._saved


def _compile_one(rule: Rule) -> list[CompiledRule] | str:
    """A rule's compiled rewrites, or its RuleError's message."""
    try:
        return compile_rule(rule)
    except RuleError as e:
        return str(e)


_worker_files: dict[str, dict[str, Rule]] = {}


def _worker_compile(chunk: list[tuple[str, str, str]]) -> list[tuple[str, list[CompiledRule] | str | None]]:
    """In a pool worker: compile each (rule file, rule name, cache key); None for a rule that is not
    the same rule when re-loaded, or that fails other than with a RuleError (left to the parent)."""
    torch.set_num_threads(1)  # tracing runs on tiny or fake tensors; one worker per core
    out = []
    with _no_guard_profiling():
        for path, name, key in chunk:
            if path not in _worker_files:
                try:
                    _worker_files[path] = {r.name: r for r in load_rule_file(Path(path))}
                except Exception:
                    _worker_files[path] = {}
            r = _worker_files[path].get(name)
            try:
                out.append((key, _compile_one(r) if r is not None and rule_key(r) == key else None))
            except Exception:
                out.append((key, None))
    return out


def _default_jobs() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, _MAX_JOBS))


def _compile_in_pool(todo: list[tuple[str, Rule]], jobs: int) -> dict[str, list[CompiledRule] | str]:
    """key -> result for the rules a pool of `jobs` fresh processes could compile."""
    import multiprocessing  # (standard library, needed only for a pool)
    from concurrent.futures import ProcessPoolExecutor
    work = [(os.path.abspath(r.source), r.name, k) for k, r in todo if r.source and os.path.isfile(r.source)]
    chunks = [work[i:i + _CHUNK] for i in range(0, len(work), _CHUNK)]
    done: dict = {}
    if len(work) < 2:
        return done
    ex = None
    try:
        ex = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=multiprocessing.get_context("spawn"))
        for res in ex.map(_worker_compile, chunks):
            done.update((key, v) for key, v in res if v is not None)
    except Exception:  # no processes here (a sandbox), a worker died: the rest is compiled serially
        pass
    except BaseException:  # interrupted, or the run's time budget spent: the chunks not started never start
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    return done


# The rules this process compiled or read from a cache file, by the file and rule key: a process that runs several
# models (`eqsat-test run A.py B.py ...`) reads the cache (megabytes of JSON) and rebuilds its rules once, not per model.
_IN_PROCESS: dict[str, dict[str, list[CompiledRule]]] = {}


def compile_rules(rules: list[Rule], *, use_cache: bool = True, jobs: int | None = None,
                  log=lambda s: None) -> tuple[list[CompiledRule], list[str]]:
    """Compile every rule (cached by rule source and torch version); returns (compiled, errors).

    Rules missing from the cache are compiled by `jobs` processes (default: one per core, when
    there are many); the result is the same as compiling them one after another here."""
    keys = [rule_key(r) for r in rules]
    cache_file = cache_dir() / f"compiled-rules-{CACHE_VERSION}.json"
    seen = _IN_PROCESS.setdefault(str(cache_file), {}) if use_cache else {}
    if use_cache and all(k in seen for k in keys):
        return [c for k in keys for c in seen[k]], []
    cache: dict = read_cache(cache_file) if use_cache else {}
    many = len({k for k in keys if k not in cache}) >= _PARALLEL_MIN  # (a few are compiled without waiting)
    dirty = False
    fd = lock_cache(cache_file) if use_cache and many else None
    try:
        if fd is not None:
            cache = read_cache(cache_file)  # another process may have compiled them while we waited
        if use_cache and any(k not in cache for k in keys):
            shipped = read_prebuilt()
            found = {k: shipped[k] for k in keys if k not in cache and k in shipped}
            if found:
                cache.update(found)
                dirty = True  # into the user's cache: the next run reads that alone
                log(f"{len(found)} compiled rules read from {prebuilt_file().name} (shipped with eqsat-test)")
        todo = list({k: r for k, r in zip(keys, rules) if k not in cache}.items())
        n_jobs = _default_jobs() if jobs is None else max(1, jobs)
        if len(todo) >= _PARALLEL_MIN:
            log(f"compiling {len(todo)} rules not in the cache ({cache_file}) on {n_jobs} process(es): "
                f"once per rule and torch version, minutes for the whole library")
        compiled: list[CompiledRule] = []
        errors: list[str] = []
        with _no_guard_profiling() if todo else contextlib.nullcontext():
            fresh = (_compile_in_pool(todo, n_jobs)
                     if n_jobs > 1 and len(todo) >= (_PARALLEL_MIN if jobs is None else 2) else {})
            for r, key in zip(rules, keys):
                if key in cache:
                    res = seen.get(key) or [CompiledRule.from_json(d) for d in cache[key]]
                else:
                    res = fresh.pop(key) if key in fresh else _compile_one(r)
                    if isinstance(res, str):
                        errors.append(res)
                        continue
                    cache[key] = [c.to_json() for c in res]
                    dirty = True
                compiled += res
                seen[key] = res
        if dirty and use_cache:
            try:
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache_file.with_suffix(f".tmp{os.getpid()}")
                tmp.write_text(json.dumps({**read_cache(cache_file), **cache}))  # (keep what others added)
                tmp.replace(cache_file)
            except OSError:
                pass
    finally:
        if fd is not None:
            os.close(fd)
    if todo:  # (importing Dynamo costs seconds: not when every rule came from a cache)
        torch._dynamo.reset()
    return compiled, errors
