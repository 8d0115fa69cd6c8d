"""Sweep plans: which dtypes and free sizes a program runs at eagerly, the points to sweep (sized by their cost), and their inputs (see runners/checks/sweeps.py)."""
from __future__ import annotations

import dataclasses
import inspect
import math
import random
import re
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from eqsat_test.runners.oracle.inputs import LAYOUTS, input_sets, with_layout
from eqsat_test.runners.protocol import cpu_error, first_line, reseed

__all__ = ["SweepConfig", "Plan", "Point", "Cost", "analyse", "plan_points", "parse_dtypes", "parse_sizes",
           "program_cost", "DEFAULT_DTYPES", "DEFAULT_SIZES", "SHAPE_EDGES"]

DTYPES = {name: getattr(torch, name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")}
DEFAULT_DTYPES = ("float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
# around vector widths (8 fp32 lanes of AVX2, 16 of AVX-512) and tiling boundaries, and empty dims
DEFAULT_SIZES = (0, 1, 7, 8, 9, 15, 16, 17, 18, 31, 32, 33, 63, 64, 65, 127, 128, 129)
# the sizes the static size points take first, one point each (the dynamic sweep calls with the rest too):
# empty and size-1 dims (specialised by the compiler), the odd sizes around vector widths (tail loops)
SHAPE_EDGES = (0, 1, 7, 15, 17, 18, 31, 33, 65)
LOW_PRECISION = (torch.float16, torch.bfloat16)
# integer data: the range random values are drawn from
_INT_RANGE = {torch.int8: (-128, 127), torch.uint8: (0, 255), torch.int16: (-1000, 1000),
              torch.int32: (-1000, 1000), torch.int64: (-1000, 1000)}
_INT_PARAM_RANGE = (-3, 3)  # parameters cast to an integer target: small weights
# order of a variant's sample; layout points are the seed's only (each a new compile of every kernel, for the
# 7 to 10 variants of a run that have no other point, a size-fixing rule's, they doubled the sweeps' time)
CATEGORIES = ("dtype,sizes", "dtype", "sizes", "dynamic")

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
    batch: int = 32  # static points per compile (a batch of 24 compiles in ~1 s a point, a lone one ~4.5 s)
    static_sizes: int = 9  # static size points (SHAPE_EDGES first, then spread over the cycle); dynamic covers every size
    layouts: tuple[str, ...] = LAYOUTS  # layout points: the given dtype and sizes, another memory layout
    point_seconds: float = 0.25  # a point whose eager work on one input set is estimated longer runs smaller (Cost)
    seconds: float = 150.0  # no new point after this long
    seed: int = 0
    key: str = ""  # mixed into a variant's sample (its graph: a graph's variants get the same points)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @staticmethod
    def from_dict(d: dict | None) -> "SweepConfig":
        d = dict(d or {})
        names = {f.name for f in dataclasses.fields(SweepConfig)}
        d = {k: v for k, v in d.items() if k in names}
        for k in ("dtypes", "sizes", "layouts"):
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
    """'0,1,7,8,9' or '1-9' ranges -> sorted distinct sizes (0: an empty dim); 'none' or '' -> ()."""
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
    if any(s < 0 for s in out):
        raise ValueError("sizes must be 0 or more")
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


# ----------------------------------------------------------------------------------------------
# cost: what one eager run of a program does, and how long a point's eager work takes

# Eager's speed on one core (2 cores, torch 2.13.0 CPU, 2026-11-28; a broadcast product written through
# transposed views is the slow case): elements written per second by elementwise and reduction ops, and
# matmul/convolution FLOPs per second by dtype (BLAS for float32/64 and bfloat16; plain loops for float16
# and the integers).
ELEMENT_RATE = 1e8
FLOP_RATE = {torch.float32: 2e10, torch.float64: 1e10, torch.bfloat16: 2e10, torch.float16: 2e9}
OTHER_FLOP_RATE = 1e10  # integers, bool
# a point estimated beyond this many times cfg.point_seconds that no free dim can shrink (a variant whose
# rule wrote its sizes in, dims tied to parameters) is not swept
UNSHRINKABLE_FACTOR = 4


@dataclass(frozen=True)
class Cost:
    """What one eager run of a program does: the elements its ops write and the FLOPs of its matmuls and
    convolutions (torch.utils.flop_counter), counted on fake tensors."""

    elements: int
    flops: int

    def seconds(self, dtype: torch.dtype) -> float:
        """Estimated eager seconds on one input set at `dtype`: two eager runs and the fp64 run."""
        def one(dt: torch.dtype) -> float:
            return self.elements / ELEMENT_RATE + self.flops / FLOP_RATE.get(dt, OTHER_FLOP_RATE)
        return 2 * one(dtype) + one(torch.float64)


class _Elements(TorchDispatchMode):
    """Counts the elements of the tensors the ops write (views write none)."""

    def __init__(self) -> None:
        super().__init__()
        self.elements = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not getattr(func, "is_view", False):
            self.elements += sum(t.numel() for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor))
        return out


def program_cost(mod, inputs: tuple) -> Cost | None:
    """The Cost of one eager run of `mod.forward` on inputs shaped like `inputs`, run on fake tensors (no data,
    no time); None where the program cannot run on them (a data-dependent shape, .item())."""
    mode = FakeTensorMode()
    try:
        fake = torch.utils._pytree.tree_map(lambda t: mode.from_tensor(t) if isinstance(t, torch.Tensor) else t,
                                            tuple(inputs))
        flops, elements = FlopCounterMode(display=False), _Elements()
        with torch.no_grad(), mode, flops, elements:
            mod.forward(*fake)
    except Exception:  # noqa: BLE001 - no estimate: the point runs at its own sizes
        return None
    return Cost(elements.elements, int(flops.get_total_flops()))


@dataclass
class Plan:
    data: list[int]  # inputs whose dtype a dtype point changes
    own_dtype: str | None  # their dtype in the model file
    dtypes: dict[str, str]  # valid target dtype -> parameter policy ("follow" | "keep")
    groups: list[Group]
    skipped: dict[str, str] = field(default_factory=dict)  # dtype or probe -> why not
    discontinuous: bool = False
    int_division: bool = False
    cost: Cost | None = None  # one eager run at the given dtype and sizes (None: not estimated)
    # dtype ("" for the given one) -> the free sizes its points at the given sizes run at instead: the
    # largest 1/2**k of the given sizes within cfg.point_seconds (an integer matmul of 1024**3 runs smaller)
    cost_sizes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def summary(self) -> dict:
        return {"data_inputs": self.data, "own_dtype": self.own_dtype, "dtypes": self.dtypes,
                "groups": [g.describe() for g in self.groups], "skipped": self.skipped,
                "discontinuous": self.discontinuous, "int_division": self.int_division,
                "cost": dataclasses.asdict(self.cost) if self.cost else None,
                "cost_sizes": {k: list(v) for k, v in self.cost_sizes.items()}}


@dataclass(frozen=True)
class Point:
    dtype: str | None  # target dtype of the data inputs; None: as given
    sizes: tuple[int, ...] | None  # one size per free group; None: as given
    dynamic: bool = False
    layout: str | None = None  # another memory layout of the non-parameter inputs (inputs.with_layout)
    cost_sized: bool = False  # sizes: the given ones scaled down for cost (Plan.cost_sizes), not a size point

    @property
    def category(self) -> str:
        if self.dynamic:
            return "dynamic"
        if self.layout:
            return "layout"
        sizes = None if self.cost_sized else self.sizes
        return ",".join(k for k, v in (("dtype", self.dtype), ("sizes", sizes)) if v is not None)

    @property
    def label(self) -> str:
        parts = ["dynamic"] if self.dynamic else []
        if self.dtype:
            parts.append(f"dtype={self.dtype}")
        if self.layout:
            parts.append(f"layout={self.layout}")
        if self.sizes is not None:
            parts.append(f"sizes={list(self.sizes)}")
        return ",".join(parts)

    @property
    def key(self) -> str:
        """The part of the label that goes into a finding's signature (not the exact sizes)."""
        parts = ["dynamic"] if self.dynamic else []
        if self.dtype:
            parts.append(f"dtype={self.dtype}")
        if self.layout:
            parts.append(f"layout={self.layout}")
        if self.sizes is not None and not self.dynamic and not self.cost_sized:
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
            reseed()
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
    """{"random": inputs, "special": inputs} of a point (deterministic in seed), on the CPU; a layout
    point's non-parameter tensors in its layout."""
    policy = plan.dtypes.get(point.dtype or "", "keep")
    templ = _templates(base, is_param, plan, point.dtype, policy, point.sizes)
    sets = input_sets(templ, is_param=is_param, seed=seed, kinds=tuple(kinds))
    out = {}
    for s in sets:
        vals = s.inputs
        if plan.int_division:  # INT_MIN // -1 traps (SIGFPE) in eager itself
            vals = tuple(_without_int_min(x) if isinstance(x, torch.Tensor) and i in plan.data else x
                         for i, x in enumerate(vals))
        if point.layout:
            vals = tuple(with_layout(x, point.layout) if isinstance(x, torch.Tensor) and not is_param[i] else x
                         for i, x in enumerate(vals))
        out[s.name.split("-")[0]] = vals
    return out


def _fitting_sizes(mod, base: tuple, is_param: list[bool], plan: Plan, dtype: torch.dtype,
                   cfg: SweepConfig) -> tuple[int, ...] | str | None:
    """For a point at the given sizes and `dtype`: None when its estimated eager work fits cfg.point_seconds
    (or cannot be estimated); else the free sizes halved until it fits; else why it is not swept."""
    if plan.cost is None or plan.cost.seconds(dtype) <= cfg.point_seconds:
        return None
    est = plan.cost.seconds(dtype)
    k = 1
    while plan.groups and any(g.size >> (k - 1) > 1 for g in plan.groups):
        sizes = tuple(max(1, g.size >> k) for g in plan.groups)
        cost = program_cost(mod, _templates(base, is_param, plan, None, "keep", sizes))
        if cost is None:
            return None
        if cost.seconds(dtype) <= cfg.point_seconds:
            return sizes
        k += 1
    if est <= UNSHRINKABLE_FACTOR * cfg.point_seconds:
        return None
    return (f"too costly: ~{est:.0f} s of eager work an input set at {str(dtype).removeprefix('torch.')} "
            f"({plan.cost.flops:.2g} FLOPs, {plan.cost.elements:.2g} elements a run), and no free dim shrinks it")


def _without_int_min(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool or t.dtype == torch.uint8:
        return t
    m = torch.iinfo(t.dtype).min
    return torch.where(t == m, torch.full_like(t, m + 1), t)


def _data_inputs(base: tuple, is_param: list[bool]) -> list[int]:
    return [i for i, (x, p) in enumerate(zip(base, is_param))
            if isinstance(x, torch.Tensor) and not p and x.is_floating_point()]


def analyse(mod, base, is_param: list[bool] | None, cfg: SweepConfig) -> Plan:
    """Which dtypes and which dims of this program can change, decided by running it eagerly; and, where a
    point at the given sizes would cost more than cfg.point_seconds, the smaller sizes it runs at."""
    base = tuple(base)
    is_param = list(is_param or [False] * len(base))
    src = _forward_source(mod)
    data = _data_inputs(base, is_param)
    own = str(base[data[0]].dtype).removeprefix("torch.") if data else None
    plan = Plan(data=data, own_dtype=own, dtypes={}, groups=[],
                discontinuous=bool(_DISCONTINUOUS.search(src.split(":", 1)[-1])) if src else True,
                int_division=bool(_INT_DIVISION.search(src)) if src else True,
                cost=program_cost(mod, base))
    own_dt = DTYPES.get(own or "", torch.float32)
    costly = plan.cost is not None and plan.cost.seconds(own_dt) > cfg.point_seconds
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
                # a costly program is probed on fake tensors (shapes, not values: 2s of a matmul chain is 8
                # times its work); a size it refuses eagerly all the same is a point set aside later
                if (program_cost(mod, inputs) is not None) if costly else _eagererror_info(mod, inputs) is None:
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
    # the given dtype's points at the given sizes (layouts), then the dtypes, at sizes within the cost
    fit = _fitting_sizes(mod, base, is_param, plan, own_dt, cfg)
    if isinstance(fit, tuple):
        plan.cost_sizes[""] = fit
    elif isinstance(fit, str):
        plan.skipped["layouts"] = fit
    for name in cfg.dtypes:
        if not data:
            plan.skipped[f"dtype={name}"] = "no floating non-parameter input"
            continue
        if name == own:
            continue
        target = DTYPES[name]
        fit = _fitting_sizes(mod, base, is_param, plan, target, cfg)
        if isinstance(fit, str):
            plan.skipped[f"dtype={name}"] = fit
            continue
        policies = ("follow", "keep") if target.is_floating_point else ("keep", "follow")
        why = None
        for policy in policies:
            trial = Plan(**{**plan.__dict__, "dtypes": {name: policy}})
            inputs = point_inputs(base, is_param, trial, Point(name, fit, cost_sized=fit is not None), cfg.seed,
                                  kinds=("random",))["random"]
            why = _eagererror_info(mod, inputs)
            if why is None:
                plan.dtypes[name] = policy
                if fit is not None:
                    plan.cost_sizes[name] = fit
                break
        if why is not None:
            plan.skipped[f"dtype={name}"] = why
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


def _static_cycle(cfg: SweepConfig) -> list[int]:
    """The sizes of the static size points: those of SHAPE_EDGES in cfg.sizes, then the others spread evenly,
    cfg.static_sizes in all."""
    edges = [z for z in cfg.sizes if z in SHAPE_EDGES][:cfg.static_sizes]
    rest = [z for z in cfg.sizes if z not in SHAPE_EDGES]
    want = cfg.static_sizes - len(edges)
    if want <= 0 or not rest:
        return edges
    picks = range(len(rest)) if want >= len(rest) else sorted({round(k * len(rest) / want) % len(rest)
                                                               for k in range(want)})
    return edges + [rest[i] for i in picks]


def _size_assignments(base: tuple, plan: Plan, cfg: SweepConfig, cycle: list[int] | tuple[int, ...],
                      dtype: str | None) -> list[tuple[int, ...]]:
    """Assignment i gives group g cycle[(i + 5g) % n] (groups differ within a point), within the memory
    budget; an assignment beyond a costly program's cost sizes at `dtype` (_within_cost) is left out."""
    n = len(cycle)
    out: list[tuple[int, ...]] = []
    for i in range(n):
        a = _fit(base, plan, tuple(cycle[(i + 5 * g) % n] for g in range(len(plan.groups))), cfg)
        if a is not None and a not in out and _within_cost(plan, a, dtype):
            out.append(a)
    return out


def _within_cost(plan: Plan, sizes: tuple[int, ...], dtype: str | None) -> bool:
    """Whether free sizes stay within the cost sizes of `dtype` ("": the given one; None: every dtype, for the
    dynamic sweep that calls them all)."""
    caps = [plan.cost_sizes[dtype]] if dtype is not None and dtype in plan.cost_sizes else \
        list(plan.cost_sizes.values()) if dtype is None else []
    return all(z <= c for cap in caps for z, c in zip(sizes, cap))


def _layout_changes(base: tuple, is_param: list[bool] | None) -> bool:
    """Whether a layout changes the memory layout of some non-parameter tensor (one of 2 or more elements)."""
    return any(isinstance(x, torch.Tensor) and not p and x.numel() > 1
               for x, p in zip(base, is_param or [False] * len(base)))


def plan_points(base, plan: Plan, cfg: SweepConfig, is_param: list[bool] | None = None
                ) -> tuple[list[Point], list[tuple[int, ...]]]:
    """(static points, the size sequence of the dynamic sweep) for this config."""
    base = tuple(base)
    dtypes = [d for d in cfg.dtypes if d in plan.dtypes]
    static: list[Point] = [Point(d, plan.cost_sizes.get(d), cost_sized=d in plan.cost_sizes) for d in dtypes]
    assignments = _size_assignments(base, plan, cfg, cfg.sizes, None) if plan.groups else []
    static += [Point(None, a) for a in (_size_assignments(base, plan, cfg, _static_cycle(cfg), "") if plan.groups else [])]
    if plan.groups:
        odd = [z for z in cfg.sizes if z % 8 and z > 1] or list(cfg.sizes)
        for d in dtypes:
            rng = random.Random(f"{cfg.seed}:mixed:{d}")
            a = _fit(base, plan, tuple(rng.choice(odd) for _ in plan.groups), cfg)
            if a is not None and _within_cost(plan, a, d):
                static.append(Point(d, a))
    if "layouts" not in plan.skipped and cfg.full:
        static += [Point(None, plan.cost_sizes.get(""), layout=lay, cost_sized="" in plan.cost_sizes)
                   for lay in cfg.layouts if _layout_changes(base, is_param)]
    dyn = [a for a in assignments if 1 not in a and 0 not in a]  # sizes 0 and 1 are specialised (recompiles)
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


