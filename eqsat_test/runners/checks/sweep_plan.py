"""Sweep plans: which dtypes and free sizes a program runs at eagerly, the points to sweep, and their inputs (see runners/checks/sweeps.py)."""
from __future__ import annotations

import dataclasses
import inspect
import math
import random
import re
from dataclasses import dataclass, field

import torch

from eqsat_test.runners.oracle.inputs import input_sets
from eqsat_test.runners.protocol import cpu_error, first_line

__all__ = ["SweepConfig", "Plan", "Point", "analyse", "plan_points", "parse_dtypes", "parse_sizes",
           "DEFAULT_DTYPES", "DEFAULT_SIZES"]

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
    out: list = []
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


def _eagererror_info(mod, inputs: tuple) -> str | None:
    """None when the program runs eagerly on `inputs`, else the error's first line. Inputs on a GPU are tried
    on the CPU first: a value the program refuses would be a device-side assert there (protocol.cpu_error)."""
    if any(isinstance(x, torch.Tensor) and x.device.type == "cuda" for x in torch.utils._pytree.tree_leaves(inputs)):
        why = cpu_error(mod, inputs)
        if why is not None:
            return why
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            mod.forward(*inputs)
        return None
    except Exception as e:
        return first_line(e)


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


