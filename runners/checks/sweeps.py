"""Dtype and size sweeps: run a program eager and compiled at dtypes and sizes beyond the ones its model file gives.

A sweep runs in the worker as a task of its own (``"sweep_only": true``), beside the variant's
ordinary task, so that a hang or a crash at some swept dtype or size costs the sweep only.

1. Analysis, by running the program eagerly (never from a hand-written op list):
   - *data inputs*: the non-parameter floating tensors; a dtype point changes their dtype.
   - which target dtypes run: for each, parameters either follow a float target (fp16 params for
     fp16 data) or stay as they are; for integer and bool targets, params stay float first and
     are cast (to small integers) only if that is what runs. A dtype none of whose policies runs
     eagerly is skipped, with the reason.
   - *free size groups*: the dims of the non-parameter tensors (size > 1), grouped by equal
     size; a group is free when the program runs eagerly with all of its dims resized (s+1 or
     2s), else each member is tried alone. Parameters fix the dims tied to them.
2. Points: every valid dtype at the given sizes ("dtype=int8"); sizes from `sizes` assigned to
   the free groups ("sizes=[17, 33]", one size per group, within `max_elements`); each valid
   dtype at odd sizes ("dtype=int8,sizes=[17, 33]"); and `dynamic=True` compilation called with
   a sequence of sizes ("dynamic,sizes=[...]"). The seed gets every point; a variant gets a
   small sample (one of each category, chosen by seed and variant id).
3. Values per dtype: floats keep the given tensors' mean/std with the dtype's special values
   (runners/inputs.py); int8/uint8 uniform over their whole range, wider ints in [-1000, 1000],
   the "special" set adding iinfo min/max, 0, +-1 (iinfo.min left out when the program divides:
   INT_MIN / -1 traps in eager itself); bools fair coins.
4. Execution: static points are compiled in batches (one `torch.compile` of a function calling
   the program once per point: ~1 s per point instead of ~4.5 s for a compile each), each batch
   called with the "random" and then the "special" inputs. Every failing point is confirmed by a
   fresh compile of the program alone on those inputs (a batch of one point needs no second
   compile); only confirmed failures become findings (their inputs are the finding's inputs.pt,
   so repro.py reproduces), unconfirmed ones are notes. A batch that crashes is split until the
   crashing point is alone. One finding per sweep category and task; findings with the same
   kind, symptom and dtype kind across variants collapse into one (`sweep_also_seen`).
5. Cost (benchmarks/sweep_cost.py): with the defaults (seed: every point, ~24 static points in
   one batch + one dynamic compile; variants: 2 points in one batch) a run costs 2.3-3x the CPU
   of a run without sweeps; `--sweep-points 0` sweeps the seeds only, `--no-sweep` nothing.

The oracle is runners/oracle.judge, unchanged, with one documented leniency: float16/bfloat16
points of programs containing discontinuous ops (comparisons, floor/ceil/round/trunc, sign,
integer casts, remainder, floor division, argmax and kin). Inductor computes low-precision
intermediates in float32 and rounds only at kernel boundaries (config.emulate_precision_casts
is off by default), so before a discontinuity eager's extra roundings can flip a comparison or
a floor: compiled is then *right* and eager is off by a whole step, which no RMSE rule can
excuse. For those points an element where compiled disagrees with eager is excused when
compiled agrees there (exactly for ints/bools, within oracle.LOOSE_TOL for floats) with the
same program run eagerly in float32 or in float64; the rest is judged as usual.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import math
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from runners.exec.protocol import compile_options, error_info, load_module, phase, to_cpu
from runners.oracle.inputs import input_sets, to_fp64_inputs
from runners.oracle.judge import LOOSE_TOL, Verdict, _rebuild, judge, leaves, tolerance

__all__ = ["SweepConfig", "Plan", "Point", "analyse", "plan_points", "run_sweeps", "run_sweep_task",
           "sweep_findings", "parse_dtypes", "parse_sizes", "DEFAULT_DTYPES", "DEFAULT_SIZES"]

DTYPES = {name: getattr(torch, name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")}
DEFAULT_DTYPES = ("float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
# around vector widths (8 fp32 lanes of AVX2, 16 of AVX-512) and tiling boundaries
DEFAULT_SIZES = (1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129)
LOW_PRECISION = (torch.float16, torch.bfloat16)
# integer data: the range random values are drawn from
_INT_RANGE = {torch.int8: (-128, 127), torch.uint8: (0, 255), torch.int16: (-1000, 1000),
              torch.int32: (-1000, 1000), torch.int64: (-1000, 1000)}
_INT_PARAM_RANGE = (-3, 3)  # parameters cast to an integer target: small weights
CATEGORIES = ("dtype,sizes", "dtype", "sizes", "dynamic")  # order of a variant's sample

# Put before the repro's main() when a dynamic-sweep failure needs earlier calls: the compiled
# function is first called with the inputs in warmup.pt, as the sweep did.
REPRO_WARMUP = '''# eqsat-test dynamic sweep: the compiled function is first called with the inputs in warmup.pt
# (Dynamo traces dynamic shapes with the first call's sizes as hints), then with inputs.pt.
_torch_compile = torch.compile


def _compile_and_warm_up(fn, **kwargs):
    compiled = _torch_compile(fn, **kwargs)
    with torch.no_grad():
        for w in torch.load(Path(__file__).with_name("warmup.pt"), weights_only=True):
            compiled(*[x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in w])
    return compiled


torch.compile = _compile_and_warm_up
'''

# Ops after which a low-precision rounding difference is a whole step, not an ulp.
_DISCONTINUOUS = re.compile(
    r"(?<![=!<>])(?:<=?|>=?|==|!=)(?!=)|//|%|\b(?:floor|ceil|round|trunc|frac|sign|sgn|signbit|gt|lt|ge|le|eq|ne|"
    r"greater|less|equal|not_equal|argmax|argmin|argsort|topk|sort|kthvalue|median|mode|bucketize|"
    r"searchsorted|remainder|fmod|floor_divide|isclose|heaviside|nonzero|unique|bincount|histc|"
    r"rounding_mode|long|int|short|char|byte|bool|int8|uint8|int16|int32|int64|logical_\w+|"
    r"isnan|isinf|isfinite|where|masked_fill|threshold)\b")
_INT_DIVISION = re.compile(r"//|%|\b(?:div|divide|true_divide|floor_divide|remainder|fmod|rounding_mode)\b")


@dataclass(frozen=True)
class SweepConfig:
    """What to sweep, and how much. Travels in the worker task as a dict."""

    dtypes: tuple[str, ...] = DEFAULT_DTYPES
    sizes: tuple[int, ...] = DEFAULT_SIZES
    full: bool = True  # every point (the seed); False: a sample of `points`
    points: int = 2  # static points sampled for a variant (one per category, round robin); 0: seeds only
    dynamic: str = "seed"  # dynamic=True sweep for: "seed", "all" or "none"
    dynamic_calls: int = 4  # sizes a variant's dynamic sweep calls with
    seed_dynamic_calls: int = 8  # sizes the seed's dynamic sweep calls with (every valid dtype batched)
    max_elements: int = 1 << 16  # per point: elements of all inputs together (eager runs dominate beyond)
    batch: int = 24  # static points per compile (a batch of 24 compiles in ~1 s a point, a lone one ~4.5 s)
    static_sizes: int = 8  # static size points (every other size of the cycle); dynamic covers every size
    seconds: float = 150.0  # no new point after this long
    seed: int = 0
    key: str = ""  # mixed into a variant's sample (its id)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @staticmethod
    def from_dict(d: dict | None) -> "SweepConfig":
        d = dict(d or {})
        names = {f.name for f in dataclasses.fields(SweepConfig)}
        d = {k: v for k, v in d.items() if k in names}
        for k in ("dtypes", "sizes"):
            if k in d:
                d[k] = tuple(d[k])
        return SweepConfig(**d)


def parse_dtypes(text: str) -> tuple[str, ...]:
    """'int8,float16' -> ('int8', 'float16'); 'none' or '' -> (). Aliases: half, bf16, fp64, long..."""
    alias = {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32", "fp32": "float32",
             "double": "float64", "fp64": "float64", "long": "int64", "int": "int32", "short": "int16",
             "char": "int8", "byte": "uint8"}
    out = []
    for item in (text or "").split(","):
        item = item.strip().removeprefix("torch.")
        if not item or item == "none":
            continue
        if item == "all":
            out.extend(DEFAULT_DTYPES)
            continue
        item = alias.get(item, item)
        if item not in DTYPES:
            raise ValueError(f"unknown dtype {item!r} (known: {', '.join(DTYPES)})")
        out.append(item)
    return tuple(dict.fromkeys(out))


def parse_sizes(text: str) -> tuple[int, ...]:
    """'1,7,8,9' or '1-9' ranges -> sorted distinct positive sizes; 'none' or '' -> ()."""
    out: set[int] = set()
    for item in (text or "").split(","):
        item = item.strip()
        if not item or item == "none":
            continue
        if "-" in item:
            a, b = item.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(item))
    if any(s < 1 for s in out):
        raise ValueError("sizes must be positive")
    return tuple(sorted(out))


# ----------------------------------------------------------------------------------------------
# analysis


@dataclass(frozen=True)
class Group:
    """Dims that change together: (input index, dim) pairs of one original size."""

    members: tuple[tuple[int, int], ...]
    size: int

    def describe(self, names: list[str] | None = None) -> str:
        def nm(i: int) -> str:
            return names[i] if names and i < len(names) else f"input{i}"
        return "+".join(f"{nm(i)}.{d}" for i, d in self.members) + f"={self.size}"


@dataclass
class Plan:
    data: list[int]  # inputs whose dtype a dtype point changes
    own_dtype: str | None  # their dtype in the model file
    dtypes: dict[str, str]  # valid target dtype -> parameter policy ("follow" | "keep")
    groups: list[Group]
    skipped: dict[str, str] = field(default_factory=dict)  # dtype or probe -> why not
    discontinuous: bool = False
    int_division: bool = False

    def summary(self) -> dict:
        return {"data_inputs": self.data, "own_dtype": self.own_dtype, "dtypes": self.dtypes,
                "groups": [g.describe() for g in self.groups], "skipped": self.skipped,
                "discontinuous": self.discontinuous, "int_division": self.int_division}


@dataclass(frozen=True)
class Point:
    dtype: str | None  # target dtype of the data inputs; None: as given
    sizes: tuple[int, ...] | None  # one size per free group; None: as given
    dynamic: bool = False

    @property
    def category(self) -> str:
        if self.dynamic:
            return "dynamic"
        return ",".join(k for k, v in (("dtype", self.dtype), ("sizes", self.sizes)) if v is not None)

    @property
    def label(self) -> str:
        parts = ["dynamic"] if self.dynamic else []
        if self.dtype:
            parts.append(f"dtype={self.dtype}")
        if self.sizes is not None:
            parts.append(f"sizes={list(self.sizes)}")
        return ",".join(parts)

    @property
    def key(self) -> str:
        """The part of the label that goes into a finding's signature (not the exact sizes)."""
        parts = ["dynamic"] if self.dynamic else []
        if self.dtype:
            parts.append(f"dtype={self.dtype}")
        if self.sizes is not None and not self.dynamic:
            parts.append("sizes")
        return ",".join(parts)


def _forward_source(mod) -> str:
    try:
        return inspect.getsource(mod.forward)
    except (OSError, TypeError):
        return ""


def _first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:200] if msg else ''}"


def _eagererror_info(mod, inputs: tuple) -> str | None:
    """None when the program runs eagerly on `inputs`, else the error's first line."""
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            mod.forward(*inputs)
        return None
    except Exception as e:
        return _first_line(e)


def _resized(t: torch.Tensor, shape: list[int]) -> torch.Tensor:
    """A tensor of `shape` repeating t's values (so that their statistics and range stay)."""
    n = math.prod(shape)
    if t.numel() == 0 or n == 0:
        return torch.zeros(shape, dtype=t.dtype, device=t.device)
    flat = t.reshape(-1)
    idx = torch.arange(n, device=t.device) % t.numel()
    return flat[idx].reshape(shape)


def _int_template(shape, dtype: torch.dtype, lo: int, hi: int, device) -> torch.Tensor:
    """A tensor whose observed range is [lo, hi]: input_sets draws uniformly from it."""
    n = math.prod(shape)
    if n == 0:
        return torch.zeros(shape, dtype=dtype, device=device)
    # evenly spread over [lo, hi]: many distinct negatives, so that inputs.py does not take the
    # lowest value for a sentinel like ignore_index
    vals = torch.linspace(lo, hi, n, dtype=torch.float64).round().to(torch.int64) if n > 1 \
        else torch.tensor([hi], dtype=torch.int64)
    return vals.reshape(shape).to(device=device, dtype=dtype)


def _as_dtype(t: torch.Tensor, dtype: torch.dtype, *, param: bool) -> torch.Tensor:
    if dtype.is_floating_point:
        return t.to(dtype)
    if dtype == torch.bool:
        return torch.zeros(t.shape, dtype=torch.bool, device=t.device)
    lo, hi = _INT_PARAM_RANGE if param else _INT_RANGE.get(dtype, (-1000, 1000))
    return _int_template(t.shape, dtype, lo, hi, t.device)


def _templates(base: tuple, is_param: list[bool], plan: Plan, dtype: str | None, policy: str,
               sizes: tuple[int, ...] | None) -> tuple:
    shapes = [list(x.shape) if isinstance(x, torch.Tensor) else None for x in base]
    if sizes is not None:
        for g, z in zip(plan.groups, sizes):
            for i, d in g.members:
                shapes[i][d] = z
    target = DTYPES[dtype] if dtype else None
    out = []
    for i, x in enumerate(base):
        if not isinstance(x, torch.Tensor):
            out.append(x)
            continue
        t = x.detach()
        if list(t.shape) != shapes[i]:
            t = _resized(t, shapes[i])
        if target is not None:
            if i in plan.data:
                t = _as_dtype(t, target, param=False)
            elif is_param[i] and policy == "follow" and t.is_floating_point():
                t = _as_dtype(t, target, param=True)
        out.append(t)
    return tuple(out)


def point_inputs(base: tuple, is_param: list[bool], plan: Plan, point: Point, seed: int,
                 kinds=("random", "special")) -> dict[str, tuple]:
    """{"random": inputs, "special": inputs} of a point (deterministic in seed)."""
    policy = plan.dtypes.get(point.dtype or "", "keep")
    templ = _templates(base, is_param, plan, point.dtype, policy, point.sizes)
    sets = input_sets(templ, is_param=is_param, seed=seed, kinds=tuple(kinds))
    out = {}
    for s in sets:
        vals = s.inputs
        if plan.int_division:  # INT_MIN // -1 traps (SIGFPE) in eager itself
            vals = tuple(_without_int_min(x) if isinstance(x, torch.Tensor) and i in plan.data else x
                         for i, x in enumerate(vals))
        out[s.name.split("-")[0]] = vals
    return out


def _without_int_min(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool or t.dtype == torch.uint8:
        return t
    m = torch.iinfo(t.dtype).min
    return torch.where(t == m, torch.full_like(t, m + 1), t)


def _data_inputs(base: tuple, is_param: list[bool]) -> list[int]:
    return [i for i, (x, p) in enumerate(zip(base, is_param))
            if isinstance(x, torch.Tensor) and not p and x.is_floating_point()]


def analyse(mod, base, is_param: list[bool] | None, cfg: SweepConfig) -> Plan:
    """Which dtypes and which dims of this program can change, decided by running it eagerly."""
    base = tuple(base)
    is_param = list(is_param or [False] * len(base))
    src = _forward_source(mod)
    data = _data_inputs(base, is_param)
    own = str(base[data[0]].dtype).removeprefix("torch.") if data else None
    plan = Plan(data=data, own_dtype=own, dtypes={}, groups=[],
                discontinuous=bool(_DISCONTINUOUS.search(src.split(":", 1)[-1])) if src else True,
                int_division=bool(_INT_DIVISION.search(src)) if src else True)
    # dtypes
    for name in cfg.dtypes:
        if not data:
            plan.skipped[f"dtype={name}"] = "no floating non-parameter input"
            continue
        if name == own:
            continue
        target = DTYPES[name]
        policies = ("follow", "keep") if target.is_floating_point else ("keep", "follow")
        why = None
        for policy in policies:
            trial = Plan(**{**plan.__dict__, "dtypes": {name: policy}})
            inputs = point_inputs(base, is_param, trial, Point(name, None), cfg.seed, kinds=("random",))["random"]
            why = _eagererror_info(mod, inputs)
            if why is None:
                plan.dtypes[name] = policy
                break
        if why is not None:
            plan.skipped[f"dtype={name}"] = why
    # free size groups
    if cfg.sizes:
        by_size: dict[int, list[tuple[int, int]]] = {}
        for i, x in enumerate(base):
            if isinstance(x, torch.Tensor) and not is_param[i]:
                for d, s in enumerate(x.shape):
                    if s > 1:
                        by_size.setdefault(int(s), []).append((i, d))

        def free(members: list[tuple[int, int]], s: int) -> bool:
            for probe in (s + 1, 2 * s):
                trial = Plan(**{**plan.__dict__, "groups": [Group(tuple(members), s)]})
                inputs = point_inputs(base, is_param, trial, Point(None, (probe,)), cfg.seed,
                                      kinds=("random",))["random"]
                if _eagererror_info(mod, inputs) is None:
                    return True
            return False

        for s, members in sorted(by_size.items()):
            if free(members, s):
                plan.groups.append(Group(tuple(members), s))
            elif len(members) > 1:
                for m in members:
                    if free([m], s):
                        plan.groups.append(Group((m,), s))
            if not any(m in g.members for g in plan.groups for m in members):
                plan.skipped[f"size={s}"] = "fixed (the program fails eagerly when these dims change)"
    return plan


# ----------------------------------------------------------------------------------------------
# points


def _elements(base: tuple, plan: Plan, sizes: tuple[int, ...]) -> int:
    shapes = [list(x.shape) if isinstance(x, torch.Tensor) else None for x in base]
    for g, z in zip(plan.groups, sizes):
        for i, d in g.members:
            shapes[i][d] = z
    return sum(math.prod(s) for s in shapes if s is not None)


def _fit(base: tuple, plan: Plan, sizes: tuple[int, ...], cfg: SweepConfig) -> tuple[int, ...] | None:
    """sizes within the memory budget (later groups back to their own size while over), or None."""
    sizes = list(sizes)
    g = len(sizes) - 1
    while _elements(base, plan, tuple(sizes)) > cfg.max_elements and g >= 0:
        sizes[g] = plan.groups[g].size
        g -= 1
    if _elements(base, plan, tuple(sizes)) > cfg.max_elements:
        return None
    if all(z == grp.size for z, grp in zip(sizes, plan.groups)):
        return None
    return tuple(sizes)


def _size_assignments(base: tuple, plan: Plan, cfg: SweepConfig, limit: int | None = None) -> list[tuple[int, ...]]:
    """Assignment i gives group g sizes[(i + 5g) % n], so groups differ within a point; `limit`
    assignments spread evenly over i (every other one for 8 of 16 sizes)."""
    n = len(cfg.sizes)
    out: list[tuple[int, ...]] = []
    picks = range(n) if not limit or limit >= n else sorted({round(k * n / limit) % n for k in range(limit)})
    for i in picks:
        a = _fit(base, plan, tuple(cfg.sizes[(i + 5 * g) % n] for g in range(len(plan.groups))), cfg)
        if a is not None and a not in out:
            out.append(a)
    return out


def plan_points(base, plan: Plan, cfg: SweepConfig) -> tuple[list[Point], list[tuple[int, ...]]]:
    """(static points, the size sequence of the dynamic sweep) for this config."""
    base = tuple(base)
    dtypes = [d for d in cfg.dtypes if d in plan.dtypes]
    static: list[Point] = [Point(d, None) for d in dtypes]
    assignments = _size_assignments(base, plan, cfg) if plan.groups else []
    static += [Point(None, a) for a in (_size_assignments(base, plan, cfg, cfg.static_sizes) if plan.groups else [])]
    if plan.groups:
        odd = [z for z in cfg.sizes if z % 8 and z > 1] or list(cfg.sizes)
        for d in dtypes:
            rng = random.Random(f"{cfg.seed}:mixed:{d}")
            a = _fit(base, plan, tuple(rng.choice(odd) for _ in plan.groups), cfg)
            if a is not None:
                static.append(Point(d, a))
    dyn = [a for a in assignments if 1 not in a]  # size 1 is specialised (recompiles) under dynamic
    if dyn:  # first call with distinct sizes per group, or duck sizing merges their symbols
        first = next((a for a in dyn if len(set(a)) == len(a)), dyn[0])
        dyn.remove(first)
        dyn = [first] + dyn[::-1]
    want_dynamic = cfg.dynamic == "all" or (cfg.dynamic == "seed" and cfg.full)
    if not want_dynamic or len(dyn) < 2:
        dyn = []
    if cfg.full:
        if len(dyn) > cfg.seed_dynamic_calls:  # spread over the sequence, the first call kept
            step = (len(dyn) - 1) / max(1, cfg.seed_dynamic_calls - 1)
            dyn = [dyn[round(k * step)] for k in range(cfg.seed_dynamic_calls)]
        return static, dyn
    rng = random.Random(f"{cfg.seed}:sample:{cfg.key}")
    by_cat: dict[str, list[Point]] = {}
    for p in static:
        by_cat.setdefault(p.category, []).append(p)
    picked: list[Point] = []
    while len(picked) < cfg.points and any(by_cat.values()):
        for cat in CATEGORIES:
            pool = by_cat.get(cat) or []
            if pool and len(picked) < cfg.points:
                picked.append(pool.pop(rng.randrange(len(pool))))
    if dyn:
        dyn = [dyn[0]] + rng.sample(dyn[1:], min(len(dyn) - 1, max(1, cfg.dynamic_calls - 1)))
    return picked, dyn


# ----------------------------------------------------------------------------------------------
# judging


def _close(g: torch.Tensor, a: torch.Tensor, rtol: float) -> torch.Tensor:
    g64, a64 = g.to(torch.float64), a.to(torch.float64)
    nan = torch.isnan(g64) & torch.isnan(a64)
    return nan | (g64 == a64) | ((g64 - a64).abs() <= rtol + rtol * a64.abs())


def lenient_judge(ref, got, fp64, ref32, *, ref2=None, index_info=None) -> Verdict:
    """judge(), excusing elements where compiled disagrees with (low-precision) eager but agrees
    with the program run in float32 or float64 (see the module docstring)."""
    v = judge(ref, got, fp64, ref2=ref2, index_info=index_info)
    if v.ok or (ref32 is None and fp64 is None):
        return v
    r_leaves, g_leaves = leaves(ref), leaves(got)
    alts = [dict(leaves(a)) for a in (ref32, fp64) if a is not None]
    if len(r_leaves) != len(g_leaves):
        return v
    excused = 0
    blended = []
    for (path, r), (_, g) in zip(r_leaves, g_leaves):
        if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)) or r.shape != g.shape \
                or r.is_complex():
            blended.append(r)
            continue
        g = g.to(r.device)
        exact = not r.is_floating_point()
        differs = (r != g) if exact else ~_close(g, r, tolerance(r.dtype))
        if not bool(differs.any()):
            blended.append(r)
            continue
        ok = torch.zeros_like(differs)
        for alt in alts:
            a = alt.get(path)
            if isinstance(a, torch.Tensor) and a.shape == g.shape:
                a = a.to(g.device)
                ok |= (g == a.to(g.dtype)) if exact else _close(g, a, LOOSE_TOL)
        take = differs & ok
        excused += int(take.sum())
        blended.append(torch.where(take, g, r) if bool(take.any()) else r)
    if not excused:
        return v
    it = iter(blended)
    v2 = judge(_rebuild(ref, lambda _leaf: next(it)), got, fp64, index_info=index_info)
    if not v2.ok:
        return dataclasses.replace(v2, detail=v2.detail + f" (after excusing {excused} low-precision elements)")
    return dataclasses.replace(
        v2, detail=f"{v2.detail}; excused {excused} elements where compiled agrees with the float32/float64 "
        f"program (low-precision rounding before a discontinuous op)")


# ----------------------------------------------------------------------------------------------
# running


def _batched(fn):
    def batched(*groups):
        return [fn(*g) for g in groups]
    return batched


def _to_fp32(inputs: tuple) -> tuple:
    return tuple(x.to(torch.float32) if isinstance(x, torch.Tensor) and x.dtype in LOW_PRECISION else x
                 for x in inputs)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9=.-]+", "_", text).strip("_")


def _fingerprint(inputs: tuple) -> str:
    desc = [(str(x.dtype), tuple(x.shape)) if isinstance(x, torch.Tensor) else repr(x) for x in inputs]
    return hashlib.sha256(repr(desc).encode()).hexdigest()[:6]


@dataclass
class _Job:
    """One point: its inputs and eager results per input set."""

    point: Point
    inputs: dict[str, tuple]
    eager: dict[str, dict] = field(default_factory=dict)  # set -> {ref, ref2, fp64, ref32, idx}
    bad: dict[str, str] = field(default_factory=dict)  # set -> eager error

    def name(self, set_name: str) -> str:
        return f"sweep-{_slug(self.point.label)}-{_fingerprint(self.inputs['random'])}-{set_name}"


class _Sweeper:
    def __init__(self, mod, base, is_param, cfg: SweepConfig, plan: Plan, *, backend: str, opts: dict,
                 device: torch.device, save_eager: str | None, save_compiled: str | None, progress=None):
        self.mod, self.base, self.is_param, self.cfg, self.plan = mod, tuple(base), is_param, cfg, plan
        self.backend, self.opts, self.device = backend, dict(opts), device
        self.save_eager = Path(save_eager) if save_eager else None
        self.save_compiled = Path(save_compiled) if save_compiled else None
        self.entries: list[dict] = []
        self.compiles = 0
        self.deadline = time.perf_counter() + cfg.seconds
        self.truncated = False
        self.progress = progress or (lambda labels: None)
        self.confirmed_categories: set[str] = set()
        self.tries: dict[str, int] = {}
        self.timings: dict[str, float] = {}

    def _timed(self, phase: str, t0: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0

    # -- eager -----------------------------------------------------------------------------
    def _eager(self, inputs: tuple, lowp: bool) -> dict:
        fwd = self.mod.forward
        with torch.no_grad():
            torch.manual_seed(0)
            ref = fwd(*inputs)
            torch.manual_seed(0)
            ref2 = fwd(*inputs)
            idx = self.mod.index_sources(*inputs)
            fp64 = ref32 = None
            try:
                torch.manual_seed(0)
                fp64 = fwd(*to_fp64_inputs(inputs))
            except Exception:
                pass
            if lowp:
                try:
                    torch.manual_seed(0)
                    ref32 = fwd(*_to_fp32(inputs))
                except Exception:
                    pass
        return {"ref": ref, "ref2": ref2, "fp64": fp64, "ref32": ref32, "idx": idx}

    def _lenient(self, point: Point) -> bool:
        return bool(point.dtype and DTYPES[point.dtype] in LOW_PRECISION and self.plan.discontinuous)

    def prepare(self, point: Point) -> _Job | None:
        t0 = time.perf_counter()
        try:
            return self._prepare(point)
        finally:
            self._timed("eager", t0)

    def _prepare(self, point: Point) -> _Job | None:
        phase("eager")  # the worker pool: a death from here on is the program's own (SIGFPE in eager)
        inputs = point_inputs(self.base, self.is_param, self.plan, point, self.cfg.seed)
        inputs = {k: tuple(x.to(self.device) if isinstance(x, torch.Tensor) else x for x in v)
                  for k, v in inputs.items()}
        job = _Job(point, inputs)
        for set_name, vals in inputs.items():
            try:
                job.eager[set_name] = self._eager(vals, self._lenient(point))
            except Exception as e:
                job.bad[set_name] = _first_line(e)
        if "random" in job.bad:
            return None
        if self.save_eager is not None:
            self.save_eager.mkdir(parents=True, exist_ok=True)
            for set_name, e in job.eager.items():
                torch.save(to_cpu(e["ref"]), self.save_eager / f"{job.name(set_name)}.pt")
        return job

    # -- compiled --------------------------------------------------------------------------
    def _compile(self, fn, dynamic: bool):
        phase("compile")
        torch._dynamo.reset()
        self.compiles += 1
        opts = dict(self.opts)
        if dynamic:
            opts["dynamic"] = True
        else:
            opts.setdefault("dynamic", False)
        return torch.compile(fn, backend=self.backend, **opts)

    def _call(self, fn, args):
        with torch.no_grad():
            torch.manual_seed(0)
            out = fn(*args)
            if self.opts.get("mode") == "reduce-overhead":
                out = fn(*args)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return out

    def _judge(self, job: _Job, set_name: str, got) -> Verdict:
        e = job.eager[set_name]
        if self._lenient(job.point):
            return lenient_judge(e["ref"], got, e["fp64"], e["ref32"], ref2=e["ref2"], index_info=e["idx"])
        return judge(e["ref"], got, e["fp64"], ref2=e["ref2"], index_info=e["idx"])

    def _entry(self, job: _Job, set_name: str, **kw) -> dict:
        p = job.point
        shapes = [list(x.shape) for x in job.inputs[set_name] if isinstance(x, torch.Tensor)]
        return {"name": job.name(set_name), "set": set_name, "sweep": p.label, "sweep_key": p.key,
                "sweep_category": p.category, "sweep_dtype": p.dtype, "shapes": shapes, **kw}

    def _save_inputs(self, job: _Job, set_name: str, got=None, warmup: list | None = None) -> dict:
        if self.save_compiled is None:
            return {}
        self.save_compiled.mkdir(parents=True, exist_ok=True)
        stem = self.save_compiled / job.name(set_name)
        out = {"inputs_file": str(stem) + ".inputs.pt"}
        torch.save(to_cpu(list(job.inputs[set_name])), out["inputs_file"])
        if got is not None:
            torch.save(to_cpu(got), str(stem) + ".out.pt")
        if warmup:
            out["warmup_file"] = str(stem) + ".warmup.pt"
            torch.save([to_cpu(list(w)) for w in warmup], out["warmup_file"])
        return out

    def _crash_entry(self, job: _Job, set_name: str, kind: str, e: BaseException, confirmed: bool) -> dict:
        err = error_info(e)
        extra = self._save_inputs(job, set_name) if confirmed else {}
        if job.point.dynamic:
            extra["compile_extra"] = {"dynamic": True}
        return self._entry(job, set_name, ok=False, kind=kind, max_abs_err=0.0, max_rel_err=0.0, leaf=None,
                           detail=f"{err['type']}: {err['message']}", error=err, confirmed=confirmed, **extra)

    def _want_confirm(self, job: _Job) -> bool:
        cat = job.point.category
        if cat in self.confirmed_categories or self.tries.get(cat, 0) >= 3 or time.perf_counter() > self.deadline:
            return False
        self.tries[cat] = self.tries.get(cat, 0) + 1
        return True

    def _confirm_static(self, job: _Job, set_name: str) -> tuple[bool, Any, Verdict | BaseException]:
        """Fresh compile of the program alone on this set: (still fails, output, verdict or error)."""
        t0 = time.perf_counter()
        fn = self._compile(self.mod.forward, dynamic=False)
        try:
            got = self._call(fn, job.inputs[set_name])
        except Exception as e:
            return True, None, e
        finally:
            self._timed("confirm", t0)
        v = self._judge(job, set_name, got)
        return not v.ok, got, v

    def run_static(self, jobs: list[_Job]) -> None:
        if not jobs:
            return
        if time.perf_counter() > self.deadline:
            self.truncated = True
            return
        self.progress([j.point.label for j in jobs])
        fn = self._compile(_batched(self.mod.forward), dynamic=False)
        outs: dict[str, list] = {}
        for k, set_name in enumerate(("random", "special")):
            args = [j.inputs[set_name] if set_name not in j.bad else j.inputs["random"] for j in jobs]
            t0 = time.perf_counter()
            try:
                outs[set_name] = self._call(fn, args)
            except Exception as e:
                self._timed("static", t0)
                if len(jobs) > 1:
                    half = len(jobs) // 2
                    self.run_static(jobs[:half])
                    self.run_static(jobs[half:])
                    return
                job = jobs[0]
                kind = "compile-crash" if k == 0 else "run-crash"
                if self._want_confirm(job):
                    still, _, err = self._confirm_static(job, set_name)
                    if still and isinstance(err, BaseException):
                        self.confirmed_categories.add(job.point.category)
                        self.entries.append(self._crash_entry(job, set_name, kind, err, True))
                        return
                self.entries.append(self._crash_entry(job, set_name, kind, e, False))
                return
            self._timed("static", t0)
        t0 = time.perf_counter()
        for j, job in enumerate(jobs):
            for set_name in ("random", "special"):
                if set_name in job.bad:
                    self.entries.append(self._entry(job, set_name, ok=True, kind="skipped", max_abs_err=0.0,
                                                    max_rel_err=0.0, leaf=None,
                                                    detail=f"eager raises: {job.bad[set_name]}"))
                    continue
                got = outs[set_name][j]
                v = self._judge(job, set_name, got)
                if v.ok:
                    self.entries.append(self._entry(job, set_name, **v.to_dict()))
                    continue
                confirmed = None
                extra: dict = {}
                if len(jobs) == 1 and job.point.category not in self.confirmed_categories:
                    # a batch of one is the program alone (Dynamo inlines it): already confirmed
                    confirmed = True
                    self.confirmed_categories.add(job.point.category)
                    extra = self._save_inputs(job, set_name, got)
                elif self._want_confirm(job):
                    still, got1, v1 = self._confirm_static(job, set_name)
                    confirmed = still
                    if still and isinstance(v1, BaseException):
                        self.confirmed_categories.add(job.point.category)
                        self.entries.append(self._crash_entry(job, set_name, "run-crash", v1, True))
                        continue
                    if still:
                        v = v1
                        self.confirmed_categories.add(job.point.category)
                        extra = self._save_inputs(job, set_name, got1)
                self.entries.append(self._entry(job, set_name, **v.to_dict(), confirmed=confirmed, **extra))
        self._timed("judge", t0)

    def run_dynamic(self, seq: list[tuple[int, ...]], dtypes: list[str | None]) -> None:
        """One dynamic=True compile called with every size of `seq` (all dtypes batched)."""
        if len(seq) < 2 or time.perf_counter() > self.deadline:
            self.truncated = self.truncated or bool(seq)
            return
        first_jobs = []
        for d in dtypes:
            job = self.prepare(Point(d, seq[0], dynamic=True))
            if job is not None:
                first_jobs.append(job)
        if not first_jobs:
            return
        slots = [j.point.dtype for j in first_jobs]
        self.progress([f"dynamic over {len(seq)} sizes, dtypes {slots}"])
        fn = self._compile(_batched(self.mod.forward), dynamic=True)
        for c, sizes in enumerate(seq):
            if time.perf_counter() > self.deadline:
                self.truncated = True
                return
            jobs = first_jobs if c == 0 else [self.prepare(Point(d, sizes, dynamic=True)) for d in slots]
            for k, set_name in enumerate(("random", "special")):
                args = []
                for job, first in zip(jobs, first_jobs):
                    usable = job is not None and set_name not in job.bad
                    args.append(job.inputs[set_name] if usable else first.inputs["random"])
                t0 = time.perf_counter()
                try:
                    outs = self._call(fn, args)
                except Exception as e:
                    self._timed("dynamic", t0)
                    # attribute it: each dtype alone, fresh dynamic compile, warm-up then this call
                    for job, first in zip(jobs, first_jobs):
                        if job is None or set_name in job.bad:
                            continue
                        kind = "compile-crash" if c == 0 and k == 0 else "run-crash"
                        if self._want_confirm(job):
                            res = self._confirm_dynamic(job, set_name, first if c else None)
                            if res is not None and isinstance(res[2], BaseException):
                                self.confirmed_categories.add("dynamic")
                                entry = self._crash_entry(job, set_name, kind, res[2], True)
                                if res[3]:
                                    entry.update(self._save_inputs(job, set_name, warmup=res[3]))
                                self.entries.append(entry)
                                return
                    self.entries.append(self._crash_entry(jobs[0] or first_jobs[0], set_name,
                                                          "compile-crash" if c == 0 and k == 0 else "run-crash",
                                                          e, False))
                    return
                self._timed("dynamic", t0)
                t0 = time.perf_counter()
                for job, first, got in zip(jobs, first_jobs, outs):
                    if job is None or set_name in job.bad:
                        continue
                    v = self._judge(job, set_name, got)
                    if v.ok:
                        self.entries.append(self._entry(job, set_name, **v.to_dict()))
                        continue
                    confirmed, extra = None, {}
                    if self._want_confirm(job):
                        res = self._confirm_dynamic(job, set_name, first if c else None)
                        confirmed = res is not None
                        if res is not None:
                            still, got1, v1, warm = res
                            self.confirmed_categories.add("dynamic")
                            if isinstance(v1, BaseException):
                                entry = self._crash_entry(job, set_name, "run-crash", v1, True)
                                if warm:
                                    entry.update(self._save_inputs(job, set_name, warmup=warm))
                                self.entries.append(entry)
                                continue
                            v = v1
                            extra = self._save_inputs(job, set_name, got1, warmup=warm)
                            extra["compile_extra"] = {"dynamic": True}
                    self.entries.append(self._entry(job, set_name, **v.to_dict(), confirmed=confirmed, **extra))
                self._timed("judge", t0)

    def _confirm_dynamic(self, job: _Job, set_name: str, first: _Job | None):
        """(True, output, verdict or error, warm-up inputs) when a fresh dynamic compile of the
        program alone fails on this set: first called with it alone, then after the first size."""
        tries = [[]] + ([[first.inputs["random"]]] if first is not None else [])
        for warm in tries:
            t0 = time.perf_counter()
            fn = self._compile(self.mod.forward, dynamic=True)
            try:
                try:
                    for w in warm:
                        self._call(fn, w)
                except Exception:
                    continue  # the warm-up itself fails: not this
                try:
                    got = self._call(fn, job.inputs[set_name])
                except Exception as e:
                    return True, None, e, warm
            finally:
                self._timed("confirm", t0)
            v = self._judge(job, set_name, got)
            if not v.ok:
                return True, got, v, warm
        return None


def run_sweeps(mod, base, is_param, cfg: SweepConfig, *, backend: str = "inductor", opts: dict | None = None,
               device: torch.device | str = "cpu", save_eager: str | None = None,
               save_compiled: str | None = None, progress=None) -> dict:
    """Analyse, plan and run the sweep of one program: {"entries": [...], "summary": {...}}."""
    t0 = time.perf_counter()
    device = torch.device(device)
    base = tuple(base)
    is_param = list(is_param or [False] * len(base))
    sys.modules.setdefault(mod.__name__, mod)  # Dynamo inlines `forward` through the batch wrapper
    dyn_cfg = torch._dynamo.config
    saved = {k: getattr(dyn_cfg, k) for k in ("recompile_limit", "accumulated_recompile_limit") if hasattr(dyn_cfg, k)}
    for k in saved:
        setattr(dyn_cfg, k, max(saved[k], 64 if k == "recompile_limit" else 1024))
    try:
        plan = analyse(mod, base, is_param, cfg)
        static, dyn = plan_points(base, plan, cfg)
        sw = _Sweeper(mod, base, is_param, cfg, plan, backend=backend, opts=opts or {}, device=device,
                      save_eager=save_eager, save_compiled=save_compiled, progress=progress)
        t_analysis = time.perf_counter() - t0
        skipped_points = []
        jobs = []
        for p in static:
            job = sw.prepare(p)
            if job is None:
                skipped_points.append(p.label)
            else:
                jobs.append(job)
        for k in range(0, len(jobs), max(1, cfg.batch)):
            sw.run_static(jobs[k:k + max(1, cfg.batch)])
        if dyn:
            dtypes = [None] + ([d for d in cfg.dtypes if d in plan.dtypes] if cfg.full else [])
            sw.run_dynamic(dyn, dtypes)
    finally:
        for k, v in saved.items():
            setattr(dyn_cfg, k, v)
        torch._dynamo.reset()
    judged = [e for e in sw.entries if e.get("kind") not in ("skipped",)]
    summary = {**plan.summary(), "points": [p.label for p in static], "dynamic_sizes": [list(a) for a in dyn],
               "eager_invalid_points": skipped_points, "judged": len(judged),
               "failing": sum(1 for e in sw.entries if not e["ok"]), "compiles": sw.compiles,
               "truncated": sw.truncated, "seconds": round(time.perf_counter() - t0, 3),
               "analysis_seconds": round(t_analysis, 3), "full": cfg.full,
               "phase_seconds": {k: round(v, 3) for k, v in sw.timings.items()}}
    return {"entries": sw.entries, "summary": summary}


def run_sweep_task(task: dict) -> dict:
    """The worker's handler of a task with "sweep_only": the variant's sweep, as a worker result."""

    device = torch.device(task.get("device", "cpu"))
    res: dict = {"task": task.get("id"), "variant": task["variant"], "backend": task["backend"],
                 "device": device.type, "status": "ok", "input_sets": [], "timings": {}, "sweep_task": True}
    t0 = time.perf_counter()
    phase("eager")  # the analysis runs the program eagerly first
    mod = load_module(task["file"])
    mod.DEVICE = device
    base = mod.get_inputs(device)
    cfg = SweepConfig.from_dict(task.get("sweep"))
    backend, opts = compile_options(task["backend"])
    progress_file = Path(task["save_compiled"]) / "sweep-progress.txt" if task.get("save_compiled") else None

    def progress(labels):
        if progress_file is not None:
            progress_file.parent.mkdir(parents=True, exist_ok=True)
            progress_file.write_text("\n".join(labels) + "\n")

    out = run_sweeps(mod, base, task.get("is_param"), cfg, backend=backend, opts=opts, device=device,
                     save_eager=task.get("save_eager"), save_compiled=task.get("save_compiled"), progress=progress)
    res["input_sets"] = out["entries"]
    res["sweep"] = out["summary"]
    res["timings"]["sweep"] = time.perf_counter() - t0
    return res


# ----------------------------------------------------------------------------------------------
# findings (pipeline side)


def sweep_findings(base: dict, variant: dict, r: dict, task: dict | None = None,
                   base_failed: set[str] | frozenset = frozenset()) -> tuple[list[dict], list[dict]]:
    """Findings and notes from one sweep task's result. base: the finding fields of the variant.

    One finding per sweep category (dtype, sizes, dtype+sizes, dynamic) and task: the first
    confirmed failure. Unconfirmed failures (only in a batch) are notes. base_failed: the input
    set kinds ("random", "special") on which the variant's ordinary task already failed; a sweep
    failure on the "special" set of such a variant is a note ("sweep-also-base"): special values
    (NaN, inf, extremes) mishandled at the model's own dtype are mishandled at every dtype, and
    one finding per dtype would be the same bug over and over."""
    findings: list[dict] = []
    notes: list[dict] = []
    status = r.get("status")
    if status in ("timeout", "process-crash", "compile-crash", "run-crash"):
        where = ""
        pf = Path(task["save_compiled"]) / "sweep-progress.txt" if task and task.get("save_compiled") else None
        if pf is not None and pf.is_file():
            where = Path(pf).read_text().strip().replace("\n", "; ")
        kind = "run-crash" if status == "process-crash" else status
        findings.append({**base, "kind": kind, "error": r.get("error"), "sweep": f"sweeps({where or '?'})",
                         "sweep_key": "sweeps", "input_set": None,
                         "detail": f"sweep task: {(r.get('error') or {}).get('message', '')}"
                         + (f" while running {where}" if where else "")})
        return findings, notes
    if status == "eager-error":  # the program itself died in eager mode at some sweep point
        notes.append({**base, "kind": "sweep-eager-error", "sweep": "sweeps",
                      "detail": f"sweep task: {(r.get('error') or {}).get('message', '')}"})
        return findings, notes
    if status != "ok":
        notes.append({**base, "kind": "internal-error", "detail": (r.get("error") or {}).get("message", ""),
                      "error": r.get("error"), "sweep": "sweeps"})
        return findings, notes
    done: set[str] = set()
    unconfirmed: dict[str, dict] = {}
    nondet = False
    for s in r.get("input_sets", []):
        if s.get("kind") == "nondeterministic" and not nondet:
            nondet = True
            notes.append({**base, "kind": "nondeterministic", "input_set": s["name"], "sweep": s["sweep"],
                          "detail": s["detail"]})
        if s.get("ok"):
            continue
        cat = s.get("sweep_category", "")
        if cat in done:
            continue
        if not s.get("confirmed"):
            unconfirmed.setdefault(cat, s)
            continue
        done.add(cat)
        if s.get("set") == "special" and "special" in base_failed and s.get("kind") not in ("compile-crash", "run-crash"):
            notes.append({**base, "kind": "sweep-also-base", "input_set": s["name"], "sweep": s["sweep"],
                          "detail": f"[{s['sweep']}] fails on special values, as the model's own dtype and "
                          f"sizes already do: {s.get('detail', '')}"})
            continue
        crash = s.get("kind") in ("compile-crash", "run-crash")
        f = {**base, "kind": s["kind"] if crash else ("seed-miscompile" if variant.get("seed") else "miscompile"),
             "input_set": s["name"], "sweep": s["sweep"], "sweep_key": s["sweep_key"],
             "sweep_dtype": s.get("sweep_dtype"), "shapes": s.get("shapes"),
             "max_abs_err": s.get("max_abs_err"), "max_rel_err": s.get("max_rel_err"), "leaf": s.get("leaf"),
             "detail": f"[{s['sweep']}] {s.get('detail', '')}", "failing_inputs": s.get("inputs_file")}
        if crash:
            f["error"] = s.get("error")
        if s.get("compile_extra"):
            f["compile_extra"] = s["compile_extra"]
        if s.get("warmup_file"):
            f["warmup_file"] = s["warmup_file"]
        findings.append(f)
    for cat, s in unconfirmed.items():
        if cat not in done:
            notes.append({**base, "kind": "sweep-unconfirmed", "input_set": s["name"], "sweep": s["sweep"],
                          "detail": f"[{s['sweep']}] failed in a batch of sweep points but not alone: "
                          f"{s.get('detail', '')}"})
    return findings, notes


def make_sweep_tasks(bundle: Path, manifest: dict, sweep: dict, *, backends, devices, seed: int,
                     input_kinds, scratch: Path, first_backend: str) -> list[dict]:
    """Worker tasks (``sweep_only``) for every variant x backend x device: the seeds' first."""
    graphs = {g["id"]: g for g in manifest["graphs"]}
    base_cfg = SweepConfig.from_dict({**sweep, "seed": seed})
    tasks = []
    for device in devices:
        for backend in backends:
            for v in sorted(manifest["variants"], key=lambda v: not v["seed"]):
                if not v["seed"] and base_cfg.points <= 0 and base_cfg.dynamic != "all":
                    continue  # seeds only
                tid = f"{v['id']}@{backend}@{device}#sweep"
                safe = re.sub(r"[^A-Za-z0-9_.-]", "_", tid.replace("@", "__"))
                cfg = dataclasses.replace(base_cfg, full=bool(v["seed"]), key=v["id"])
                tasks.append({
                    "id": tid, "variant": v["id"], "file": str((bundle / v["file"]).resolve()),
                    "backend": backend, "device": device, "seed": seed, "input_kinds": list(input_kinds),
                    "is_param": graphs[v["graph"]]["is_param"], "sweep_only": True, "sweep": cfg.to_dict(),
                    "save_eager": str(scratch / "eager" / f"{v['id']}__{device}") if backend == first_backend
                    else None,
                    "save_compiled": str(scratch / "sweeps" / safe),
                })
    return tasks


def is_sweep_result(r: dict) -> bool:
    return bool(r.get("sweep_task")) or str(r.get("task", "")).endswith("#sweep")


def judge_sweep_results(manifest: dict, results: list[dict], tasks: list[dict], scratch: Path,
                        first_backend: str | None, base_findings: list[dict] | None = None
                        ) -> tuple[list[dict], list[dict], dict]:
    """Findings, notes and stats from the sweep tasks' results (the counterpart of
    pipeline.judge_results): compiler bugs per sweep category, and unsound rewrites where a
    variant's eager output at a sweep point differs from its seed's at the same point."""
    from runners.oracle.judge import compare_eager

    findings: list[dict] = []
    notes: list[dict] = []
    variants = {v["id"]: v for v in manifest["variants"]}
    seeds = {v["graph"]: v["id"] for v in manifest["variants"] if v["seed"]}
    graphs = {g["id"]: g for g in manifest["graphs"]}
    by_id = {t["id"]: t for t in tasks}
    failed: dict[tuple, set[str]] = {}  # (variant, backend, device) -> input set kinds failed by the ordinary task
    for f in base_findings or []:
        if f.get("kind") in ("miscompile", "seed-miscompile") and f.get("input_set"):
            failed.setdefault((f["variant"], f["backend"], f["device"]), set()).add(str(f["input_set"]).split("-")[0])
    stats = {"tasks": 0, "judged": 0, "failing": 0, "compiles": 0, "seconds": 0.0, "truncated": 0}
    for r in results:
        v = variants[r["variant"]]
        base = {"variant": v["id"], "graph": v["graph"], "backend": r["backend"], "device": r["device"],
                "rules": v["rules"], "mode": v["mode"], "ops": sorted(set(graphs[v["graph"]].get("op_names", [])))}
        f, n = sweep_findings(base, v, r, by_id.get(r.get("task")),
                              failed.get((v["id"], r["backend"], r["device"]), set()))
        findings += f
        notes += n
        s = r.get("sweep") or {}
        stats["tasks"] += 1
        for k in ("judged", "failing", "compiles"):
            stats[k] += int(s.get(k) or 0)
        stats["seconds"] += float(s.get("seconds") or 0.0)
        stats["truncated"] += int(bool(s.get("truncated")))
        if not v["seed"] and r["backend"] == first_backend and r.get("status") == "ok":
            sd = scratch / "eager" / f"{seeds[v['graph']]}__{r['device']}"
            vd = scratch / "eager" / f"{v['id']}__{r['device']}"
            for e in r.get("input_sets", []):
                a, b = sd / f"{e['name']}.pt", vd / f"{e['name']}.pt"
                if a.is_file() and b.is_file():
                    verdict = compare_eager(torch.load(a, weights_only=False), torch.load(b, weights_only=False))
                    if not verdict.ok:
                        notes.append({**base, "kind": "unsound-rewrite", "input_set": e["name"], "sweep": e["sweep"],
                                      "max_abs_err": verdict.max_abs_err,
                                      "detail": f"[{e['sweep']}] {verdict.detail}"})
                        break
    stats["seconds"] = round(stats["seconds"], 3)
    findings = collapse(findings, variants)
    return findings, notes, stats


def _symptom(f: dict) -> str:
    if f["kind"] in ("compile-crash", "run-crash", "timeout"):
        return f"{f['kind']}:{(f.get('error') or {}).get('type', '')}"
    d = f.get("detail", "")
    for key, name in (("NaN/Inf positions differ", "nonfinite"), ("(exact)", "exact"), ("structure differs", "structure"),
                      ("selected values differ", "indices"), ("out of range", "indices")):
        if key in d:
            return name
    return "values"


def _dtype_kind(name: str | None) -> str:
    if not name:
        return "given"
    t = DTYPES[name]
    return "lowp" if t in LOW_PRECISION else "float" if t.is_floating_point else "bool" if t == torch.bool else "int"


def collapse(findings: list[dict], variants: dict) -> list[dict]:
    """One sweep finding per (kind, backend, device, symptom, dtype kind): the seed's (else the
    first) stands for the others, listed in `sweep_also_seen`. A bug at the model's own dtype that
    sweeps meet at every size and in every variant (NaN handling, say) is one finding, not one per
    variant x dtype x size; rules are left out because sweep findings are not minimized."""
    groups: dict[tuple, dict] = {}
    out: list[dict] = []
    for f in sorted(findings, key=lambda f: not variants.get(f["variant"], {}).get("seed")):
        kind = "miscompile" if f["kind"] == "seed-miscompile" else f["kind"]
        key = (kind, f.get("backend"), f.get("device"), _symptom(f), _dtype_kind(f.get("sweep_dtype")))
        if key in groups:
            groups[key].setdefault("sweep_also_seen", []).append(f"{f['variant']}: {f.get('sweep')}")
            continue
        groups[key] = f
        out.append(f)
    return out
