"""What a run's dtype and size sweeps covered, and why the rest was not swept: a record for results.json and the lines of the run summary."""
from __future__ import annotations

from eqsat_test.runners.records import ResultStatus

MAX_REASONS = 4  # fixed sizes whose reason the summary spells out


def sweep_coverage(sweep_results: list[dict], manifest: dict, sweep_cfg: dict | None) -> dict:
    """{"seeds": [per seed program: dtypes swept and not (why), free size groups, size points, dynamic
    sizes, cut short], "variants": {...}, "seconds_cap": ...} from the sweep tasks' results."""
    if sweep_cfg is None:
        return {"off": "--no-sweep (or --dtypes none --sweep-sizes none)"}
    variants = {v["id"]: v for v in manifest["variants"]}
    requested = list(sweep_cfg.get("dtypes") or ())
    seeds, swept_variants, dtype_limited, sizes_fixed, failed = [], set(), set(), set(), []
    for r in sweep_results:
        v = variants.get(r.get("variant")) or {}
        if r.get("status") != ResultStatus.OK:
            failed.append({"program": r.get("variant"), "status": r.get("status"),
                           "error": ((r.get("error") or {}).get("message") or "")[:300]})
            continue
        if not v.get("seed"):
            swept_variants.add(v.get("id"))
            if v.get("dtypes") is not None:
                dtype_limited.add(v["id"])
            if v.get("fixed_sizes"):
                sizes_fixed.add(v["id"])
            continue
        s = r.get("sweep") or {}
        points = list(s.get("points") or [])
        not_swept = {}
        for d in requested:
            if d in (s.get("dtypes") or {}):
                continue
            not_swept[d] = ("the model's own dtype (run as given)" if d == s.get("own_dtype") else
                            (s.get("skipped") or {}).get(f"dtype={d}") or "no point planned")
        groups = list(s.get("groups") or [])
        size_points = sum(1 for p in points if "sizes=" in p)
        fixed = {k.split("=", 1)[1]: why for k, why in (s.get("skipped") or {}).items() if k.startswith("size=")}
        if not sweep_cfg.get("sizes"):
            sizes_why = "not asked for (--sweep-sizes none)"
        elif not groups:
            sizes_why = ("no free dimension: " + "; ".join(f"{n}: {w}" for n, w in list(fixed.items())[:MAX_REASONS])
                         if fixed else "no free dimension (no non-parameter input has a dimension above 1)")
        elif not size_points and not s.get("dynamic_sizes"):
            sizes_why = (f"no size point fits the sweep's bound of {sweep_cfg.get('max_elements', 1 << 16):,} "
                         f"elements over all inputs together (the inputs are larger already)")
        else:
            sizes_why = None
        seeds.append({"program": r.get("variant"), "backend": r.get("backend"), "device": r.get("device"),
                      "own_dtype": s.get("own_dtype"), "dtypes": sorted(s.get("dtypes") or {}),
                      "dtypes_not": not_swept, "size_groups": groups, "sizes_fixed": fixed,
                      "size_points": size_points, "dynamic_sizes": len(s.get("dynamic_sizes") or []),
                      "sizes_not": sizes_why, "eager_invalid_points": list(s.get("eager_invalid_points") or []),
                      "cut_short": bool(s.get("truncated"))})
    n_variants = sum(1 for v in manifest["variants"] if not v["seed"])
    points = int(sweep_cfg.get("points", 2))
    return {"seeds": seeds, "failed": failed, "seconds_cap": sweep_cfg.get("seconds"),
            "variants": {"total": n_variants, "swept": len(swept_variants), "points_each": points,
                         "dynamic": sweep_cfg.get("dynamic"),
                         "why_not": None if swept_variants or not n_variants else (
                             "--sweep-points 0: the seeds only" if points <= 0 else "none finished"),
                         "dtype_limited": len(dtype_limited), "sizes_fixed": len(sizes_fixed)}}


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


def coverage_lines(cov: dict | None, stats: dict | None) -> list[str]:
    """The run summary's lines on the sweeps (stats: judge_sweep_results' counts)."""
    if not cov:
        return []
    if cov.get("off"):
        return [f"  sweeps: none ({cov['off']}): only the model file's own dtypes and sizes"]
    st = stats or {}
    lines = [f"  sweeps: {st.get('judged', 0)} swept input sets judged in {st.get('tasks', 0)} sweep tasks "
             f"({st.get('compiles', 0)} compiles, {st.get('seconds', 0):.0f} s)"]
    for s in cov["seeds"]:
        dt = ", ".join(s["dtypes"]) or "none"
        lines.append(f"    {s['program']}: dtypes swept: {dt}" + (f"; not swept: {_why_not(s['dtypes_not'])}"
                                                                   if s["dtypes_not"] else ""))
        if s["sizes_not"]:
            lines.append(f"    {s['program']}: sizes not swept: {s['sizes_not']}")
        else:
            lines.append(f"    {s['program']}: sizes swept over {len(s['size_groups'])} free dim group(s) "
                         f"({', '.join(s['size_groups'][:4])}): {s['size_points']} static size points"
                         + (f", dynamic=True over {s['dynamic_sizes']} sizes" if s["dynamic_sizes"] else ""))
    v = cov["variants"]
    if v["total"]:
        extra = [f"{v['dtype_limited']} at their rules' dtypes only" if v["dtype_limited"] else "",
                 f"{v['sizes_fixed']} at their own sizes only (a rule wrote the sizes in)" if v["sizes_fixed"] else ""]
        extra = [e for e in extra if e]
        lines.append(f"    variants: {v['swept']} of {v['total']} swept, {v['points_each']} sampled points each "
                     f"(--sweep-points)" + (f"; {', '.join(extra)}" if extra else "")
                     + (f" ({v['why_not']})" if v.get("why_not") else ""))
    for f in cov.get("failed") or []:
        lines.append(f"    {f['program']}: sweep task ended in {f['status']}: {f['error'][:160]}")
    cut = st.get("truncated") or 0
    if cut:
        lines.append(f"    {cut} sweep task(s) cut short by the sweeps' own time cap ({cov.get('seconds_cap') or 0:.0f} s per "
                     f"sweep task: half of --timeout, or what --time-budget had left): their later points were not run")
    return lines
