"""What a --coverage run's tasks add to the compiler lines their seed reaches: per task, per pass file, in all.

Each task of a run made with `--coverage` leaves the lines of torch/_inductor, _functorch, _decomp and
_refs it reached (runners/exec/compiler_lines.py). `line_gain` compares them: a variant's gain is
the lines it reaches that its graph's seed does not; a sweep task's gain likewise (the seed's own
sweeps: dtypes, sizes, dynamic shapes). The run's totals, per backend and device: the lines the
seeds reach, the lines all variants add beyond them, the lines the seeds' sweeps add, and both gains
per pass-file group and per file.
"""
from __future__ import annotations

import re
from collections import Counter

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.exec.compiler_lines import read_lines
from eqsat_test.runners.records import Result, Task

# pass-file groups, first match wins (paths relative to torch/)
GROUPS = (
    ("fx_passes", ("_inductor/fx_passes/",)),
    ("lowering", ("_inductor/lowering.py",)),
    ("ir", ("_inductor/ir.py",)),
    ("scheduler", ("_inductor/scheduler.py",)),
    ("codegen", ("_inductor/codegen/",)),
    ("decompositions", ("_inductor/decomposition.py", "_decomp/", "_refs/")),
    ("pattern_matcher", ("_inductor/pattern_matcher.py",)),
    ("functorch", ("_functorch/",)),
    ("inductor_other", ("_inductor/",)),
)
GROUP_NAMES = tuple(g for g, _ in GROUPS)


def group_of(path: str) -> str:
    p = path.replace("\\", "/")
    for name, prefixes in GROUPS:
        if p.startswith(prefixes):
            return name
    return "other"


Lines = set  # of (file, line)


def as_set(lines: dict) -> Lines:
    return {(f, n) for f, ns in lines.items() for n in ns}


def by_group(lines: Lines) -> dict[str, int]:
    c = Counter(group_of(f) for f, _ in lines)
    return {g: c[g] for g in GROUP_NAMES + ("other",) if c.get(g)}


def by_file(lines: Lines, top: int | None = None) -> dict[str, int]:
    c = Counter(f for f, _ in lines)
    return dict(c.most_common(top))


def _is_sweep(r: Result) -> bool:
    return bool(r.sweep_task) or r.is_sweep


_BUCKETS = {(True, False): "seed", (False, False): "variants", (True, True): "seed_sweeps",
            (False, True): "variant_sweeps"}  # (is the seed, is a sweep task) -> the run's total it adds to


def task_lines(results: list[Result]) -> dict[str, Lines]:
    """Task id -> its lines, for every result that has a lines file."""
    out = {}
    for r in results:
        info = r.compiler_lines
        if info and info.get("file"):
            out[r.task] = as_set(read_lines(info["file"]))
    return out


def line_gain(manifest: Manifest, results: list[Result], lines: dict[str, Lines] | None = None) -> dict | None:
    """results.json's `stats.compiler_lines` (None when no task was measured)."""
    lines = task_lines(results) if lines is None else lines
    if not lines:
        return None
    seed_of = manifest.seed_of
    plain: dict[tuple, Lines] = {}  # (variant, backend, device) -> lines of its plain task
    for r in results:
        if r.task in lines and not _is_sweep(r):
            plain[(r.variant, r.backend, r.device)] = lines[r.task]
    per_task: dict[str, dict] = {}
    totals: dict[str, dict] = {}
    for r in results:
        got = lines.get(r.task)
        v = manifest.find_variant(r.variant)
        if got is None or v is None:
            continue
        where = f"{r.backend}/{r.device}"
        seed = plain.get((seed_of.get(v.graph), r.backend, r.device), set())
        new = got - seed
        per_task[r.task] = {"lines": len(got), "new_vs_seed": len(new), "new_by_group": by_group(new)}
        t = totals.setdefault(where, {"seed": set(), "variants": set(), "seed_sweeps": set(), "variant_sweeps": set()})
        t[_BUCKETS[(v.seed, _is_sweep(r))]].update(got)
    summary = {}
    for where, t in totals.items():
        seed = t["seed"]
        var_new = t["variants"] - seed
        sweep_new = t["seed_sweeps"] - seed
        summary[where] = {
            "seed_lines": len(seed),
            "variant_gain": len(var_new), "variant_gain_by_group": by_group(var_new),
            "variant_gain_by_file": by_file(var_new, 40),
            "sweep_gain": len(sweep_new), "sweep_gain_by_group": by_group(sweep_new),
            "sweep_gain_by_file": by_file(sweep_new, 40),
            "variant_sweep_gain": len(t["variant_sweeps"] - seed - t["variants"] - t["seed_sweeps"]),
            "all_lines": len(seed | t["variants"] | t["seed_sweeps"] | t["variant_sweeps"]),
            "variants_measured": sum(1 for (vid, b, d) in plain if not manifest.variant(vid).seed and f"{b}/{d}" == where),
        }
    return {"scope": "torch/_inductor, _functorch, _decomp, _refs (lines, caches off, after a warm-up compile)",
            "summary": summary, "tasks": per_task}


def summary_line(stats: dict | None) -> str:
    """One line for the run summary: seed lines, the variants' gain, the sweeps' gain."""
    if not stats or not stats.get("summary"):
        return "compiler lines reached: none measured"
    parts = []
    for where, s in stats["summary"].items():
        seed = max(1, s["seed_lines"])
        parts.append(f"{where}: seed {s['seed_lines']:,} lines; {s['variants_measured']} variants add "
                     f"{s['variant_gain']:,} (+{100 * s['variant_gain'] / seed:.0f}%); seed sweeps add "
                     f"{s['sweep_gain']:,} (+{100 * s['sweep_gain'] / seed:.0f}%)")
    return "compiler lines reached: " + " | ".join(parts)


def coverage_paths(tasks: list[Task], out) -> list[Task]:
    """The tasks, each with where it writes the compiler lines it reaches (under OUT/compiler_lines/)."""
    return [t.with_(coverage=str(out / "compiler_lines" / (re.sub(r"[^A-Za-z0-9_.-]", "_", str(t.id)) + ".json")))
            for t in tasks]
