"""What a run's dtype, size and layout sweeps covered, and why the rest was not swept: a record for results.json and the lines of the run summary."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.records import Result, ResultStatus

MAX_REASONS = 4  # fixed sizes whose reason the summary spells out


@dataclass(frozen=True)
class SeedSweep:
    """The sweep of one seed program (every point of the plan): what ran, and why the rest did not."""

    program: str
    backend: str
    device: str
    own_dtype: str | None
    dtypes: tuple[str, ...]  # swept
    dtypes_not: dict  # dtype -> why not swept (asked for by --dtypes)
    size_groups: tuple[str, ...]  # free dims, grouped by equal size ("input0.0+input1.0=12")
    sizes_fixed: dict  # size -> why those dims cannot change
    size_points: int  # static points at other sizes
    dynamic_sizes: int  # sizes the dynamic=True compile was called with
    sizes_not: str | None  # why no size was swept (None: some were)
    eager_invalid_points: tuple[str, ...] = ()
    cut_short: bool = False  # by the sweep's own time cap
    layouts: tuple[str, ...] = ()  # layout points planned ("strided", "expanded")
    layouts_not: str | None = None  # why none was (too costly at the given sizes)
    cost_sizes: dict = field(default_factory=dict)  # dtype ("" the given one) -> the smaller free sizes its points ran at

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @staticmethod
    def from_dict(d: dict) -> "SeedSweep":
        return SeedSweep(**{**d, **{k: tuple(d.get(k) or ()) for k in ("dtypes", "size_groups", "eager_invalid_points",
                                                                       "layouts")}})


@dataclass(frozen=True)
class SweepCoverage:
    """The sweeps of a run: per seed program a SeedSweep; the variants' sampled sweeps in counts."""

    off: str | None = None  # why there were no sweeps at all
    seeds: tuple[SeedSweep, ...] = ()
    failed: tuple[dict, ...] = ()  # sweep tasks that ended in a timeout or crash: program, status, error
    seconds_cap: float | None = None  # the sweeps' own time cap per sweep task
    variants: dict = field(default_factory=dict)  # total, swept, points_each, dynamic, why_not, dtype_limited, sizes_fixed

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "seeds": [s.to_dict() for s in self.seeds], "failed": list(self.failed)}

    @staticmethod
    def from_dict(d: dict) -> "SweepCoverage":
        return SweepCoverage(off=d.get("off"), seeds=tuple(SeedSweep.from_dict(s) for s in d.get("seeds") or ()),
                             failed=tuple(d.get("failed") or ()), seconds_cap=d.get("seconds_cap"),
                             variants=dict(d.get("variants") or {}))


def sweep_coverage(sweep_results: list[Result], manifest: Manifest, sweep_cfg: dict | None) -> SweepCoverage:
    """The coverage record of a run's sweep tasks' results (`sweep_cfg`: the SweepConfig fields run with)."""
    if sweep_cfg is None:
        return SweepCoverage(off="--no-sweep (or --dtypes none --sweep-sizes none)")
    requested = list(sweep_cfg.get("dtypes") or ())
    seeds, failed, swept, dtype_limited, sizes_fixed = [], [], set(), set(), set()
    for r in sweep_results:
        v = manifest.find_variant(r.variant)
        if r.status != ResultStatus.OK:
            failed.append({"program": r.variant, "status": r.status.value,
                           "error": r.error_message[:300]})
            continue
        if v is None or not v.seed:
            swept.add(r.variant)
            if v is not None and v.dtypes is not None:
                dtype_limited.add(v.id)
            if v is not None and v.fixed_sizes:
                sizes_fixed.add(v.id)
            continue
        seeds.append(_seed_sweep(r, requested, sweep_cfg))
    n_variants = manifest.rewritten_count
    points = int(sweep_cfg.get("points", 2))
    return SweepCoverage(seeds=tuple(seeds), failed=tuple(failed), seconds_cap=sweep_cfg.get("seconds"), variants={
        "total": n_variants, "swept": len(swept), "points_each": points, "dynamic": sweep_cfg.get("dynamic"),
        "why_not": None if swept or not n_variants else ("--sweep-points 0: the seeds only" if points <= 0
                                                          else "none finished"),
        "dtype_limited": len(dtype_limited), "sizes_fixed": len(sizes_fixed)})


def _seed_sweep(r: Result, requested: list[str], cfg: dict) -> SeedSweep:
    s = r.sweep or {}
    skipped = s.get("skipped") or {}
    points = list(s.get("points") or [])
    not_swept = {d: ("the model's own dtype (run as given)" if d == s.get("own_dtype") else
                     skipped.get(f"dtype={d}") or "no point planned")
                 for d in requested if d not in (s.get("dtypes") or {})}
    groups = tuple(s.get("groups") or ())
    cats = list(s.get("point_categories") or [])
    size_points = sum(1 for c in cats if c in ("sizes", "dtype,sizes")) if cats else sum(1 for p in points if "sizes=" in p)
    layouts = tuple(p.split("layout=", 1)[1].split(",", 1)[0] for p, c in zip(points, cats) if c == "layout")
    fixed = {k.split("=", 1)[1]: why for k, why in skipped.items() if k.startswith("size=")}
    if not cfg.get("sizes"):
        sizes_not = "not asked for (--sweep-sizes none)"
    elif not groups:
        sizes_not = ("no free dimension: " + "; ".join(f"{n}: {w}" for n, w in list(fixed.items())[:MAX_REASONS])
                     if fixed else "no free dimension (no non-parameter input has a dimension above 1)")
    elif not size_points and not s.get("dynamic_sizes"):
        sizes_not = (f"no size point fits the sweep's bound of {cfg.get('max_elements', 1 << 16):,} elements "
                     f"over all inputs together (the inputs are larger already)")
    else:
        sizes_not = None
    return SeedSweep(program=r.variant, backend=r.backend, device=r.device,
                     own_dtype=s.get("own_dtype"), dtypes=tuple(sorted(s.get("dtypes") or {})), dtypes_not=not_swept,
                     size_groups=groups, sizes_fixed=fixed, size_points=size_points,
                     dynamic_sizes=len(s.get("dynamic_sizes") or []), sizes_not=sizes_not,
                     eager_invalid_points=tuple(s.get("eager_invalid_points") or ()), cut_short=bool(s.get("truncated")),
                     layouts=layouts, layouts_not=skipped.get("layouts"), cost_sizes=dict(s.get("cost_sizes") or {}))


def _why_not(reasons: dict[str, str]) -> str:
    """Dtypes grouped by why they were not swept; an eager error is shown once, for the first dtype."""
    groups: dict[str, list[str]] = {}
    example: dict[str, str] = {}
    for d, why in reasons.items():
        key = "the program fails eagerly at them" if "Error" in why.split(":", 1)[0] else why
        groups.setdefault(key, []).append(d)
        example.setdefault(key, f"{d}: {why[:120]}{'...' if len(why) > 120 else ''}")
    return "; ".join(f"{', '.join(ds)} ({why}{f', e.g. {example[why]}' if why != example[why].split(': ', 1)[1] else ''})"
                     for why, ds in groups.items())


def coverage_lines(cov: SweepCoverage | None, stats: dict | None) -> list[str]:
    """The run summary's lines on the sweeps (stats: judge_sweep_results' counts)."""
    if cov is None:
        return []
    if cov.off:
        return [f"  sweeps: none ({cov.off}): only the model file's own dtypes and sizes"]
    st = stats or {}
    lines = [f"  sweeps: {st.get('judged', 0)} swept input sets judged in {st.get('tasks', 0)} sweep tasks "
             f"({st.get('compiles', 0)} compiles, {st.get('seconds', 0):.0f} s)"]
    for s in cov.seeds:
        lines.append(f"    {s.program}: dtypes swept: {', '.join(s.dtypes) or 'none'}"
                     + (f"; not swept: {_why_not(s.dtypes_not)}" if s.dtypes_not else ""))
        if s.sizes_not:
            lines.append(f"    {s.program}: sizes not swept: {s.sizes_not}")
        else:
            lines.append(f"    {s.program}: sizes swept over {len(s.size_groups)} free dim group(s) "
                         f"({', '.join(s.size_groups[:4])}): {s.size_points} static size points"
                         + (f", dynamic=True over {s.dynamic_sizes} sizes" if s.dynamic_sizes else ""))
        if s.layouts:
            lines.append(f"    {s.program}: layouts swept: {', '.join(s.layouts)}")
        elif s.layouts_not:
            lines.append(f"    {s.program}: layouts not swept: {s.layouts_not}")
        if s.eager_invalid_points:
            shown = s.eager_invalid_points[:MAX_REASONS]
            lines.append(f"    {s.program}: {len(s.eager_invalid_points)} point(s) set aside, the program raises eagerly "
                         f"at them: {', '.join(shown)}{' ...' if len(s.eager_invalid_points) > len(shown) else ''}")
        if s.cost_sizes:
            lines.append(f"    {s.program}: costly at the given sizes, run smaller: "
                         + ", ".join(f"{d or s.own_dtype or 'given'} at {list(z)}" for d, z in s.cost_sizes.items())
                         + " (estimated eager work per point; sweep_plan.Cost)")
    v = cov.variants
    if v.get("total"):
        extra = [f"{v['dtype_limited']} at their rules' dtypes only" if v.get("dtype_limited") else "",
                 f"{v['sizes_fixed']} at their own sizes only (a rule wrote the sizes in)" if v.get("sizes_fixed") else ""]
        extra = [e for e in extra if e]
        lines.append(f"    variants: {v['swept']} of {v['total']} swept, {v['points_each']} sampled points each "
                     f"(--sweep-points)" + (f"; {', '.join(extra)}" if extra else "")
                     + (f" ({v['why_not']})" if v.get("why_not") else ""))
    for f in cov.failed:
        lines.append(f"    {f['program']}: sweep task ended in {f['status']}: {f['error'][:160]}")
    cut = st.get("truncated") or 0
    if cut:
        lines.append(f"    {cut} sweep task(s) cut short by the sweeps' own time cap ({cov.seconds_cap or 0:.0f} s per "
                     f"sweep task: half of --timeout, or what --time-budget had left): their later points were not run")
    return lines
