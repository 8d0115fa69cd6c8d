"""Dtype, size and layout sweeps: run a program eager and compiled at dtypes, sizes and memory layouts beyond the ones its model file gives.

A sweep runs in the worker as a task of its own (kind ``"sweep"``), beside the variant's
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
   - *cost*: what one eager run does (elements written, matmul/conv FLOPs), counted on fake
     tensors; a point at the given sizes whose eager work at its dtype is estimated beyond
     `point_seconds` runs at the free sizes halved until it fits (sweep_plan.Cost).
2. Points: every valid dtype at the given sizes ("dtype=int8"; a costly one at smaller sizes,
   "dtype=int64,sizes=[256]", still in the dtype category); sizes assigned to the free groups
   ("sizes=[17, 33]", one size per group, within `max_elements`; SHAPE_EDGES first: 0, 1 and odd
   sizes around vector widths); each valid dtype at odd sizes ("dtype=int8,sizes=[17, 33]"); each
   memory layout at the given dtype and sizes ("layout=strided", "layout=expanded":
   inputs.with_layout; the seed's only); and `dynamic=True` compilation called with a sequence of
   sizes ("dynamic,sizes=[...]"). The seed gets every point; a variant gets a small sample (one of
   each category but layout, chosen by seed and variant id). A point the program refuses eagerly (an expanded
   input it writes to) is set aside.
3. Values per dtype: floats keep the given tensors' mean/std with the dtype's special values
   (runners/oracle/inputs.py); int8/uint8 uniform over their whole range, wider ints in [-1000, 1000],
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
   of a run without sweeps (measured before the shape-edge and layout points, which add 3 points
   to the seed's batch of up to 32); `--sweep-points 0` sweeps the seeds only, `--no-sweep` nothing.

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
import re
from pathlib import Path

import torch

from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.runners.checks.sweep_plan import DTYPES, LOW_PRECISION, SweepConfig
from eqsat_test.runners.checks.unsound import unsound_verdict
from eqsat_test.runners.oracle.judge import NONDETERMINISTIC
from eqsat_test.runners.records import (
    CRASH_STATUSES,
    Finding,
    FindingKind,
    InputSetVerdict,
    Result,
    ResultStatus,
    Task,
    TaskKind,
    as_finding,
    new_finding,
)

_CRASH_KINDS = (FindingKind.COMPILE_CRASH.value, FindingKind.RUN_CRASH.value)


def sweep_findings(base: dict, variant: Variant, r: Result, task: Task | None = None,
                   base_failed: set[str] | frozenset = frozenset()) -> tuple[list[Finding], list[Finding]]:
    """Findings and notes from one sweep task's result. base: the finding fields of the variant.

    One finding per sweep category (dtype, sizes, dtype+sizes, dynamic) and task: the first
    confirmed failure. Unconfirmed failures (only in a batch) are notes. base_failed: the input
    set kinds ("random", "special") on which the variant's ordinary task already failed; a sweep
    failure on the "special" set of such a variant is a note ("sweep-also-base"): special values
    (NaN, inf, extremes) mishandled at the model's own dtype are mishandled at every dtype, and
    one finding per dtype would be the same bug over and over."""
    findings: list[Finding] = []
    notes: list[Finding] = []
    status = r.status
    if status == ResultStatus.TIMEOUT or status in CRASH_STATUSES:
        where = ""
        pf = Path(task.save_compiled) / "sweep-progress.txt" if task is not None and task.save_compiled else None
        if pf is not None and pf.is_file():
            where = Path(pf).read_text().strip().replace("\n", "; ")
        kind = FindingKind.RUN_CRASH if status == ResultStatus.PROCESS_CRASH else FindingKind.parse(status)
        findings.append(new_finding(kind, base, error=r.error, sweep=f"sweeps({where or '?'})",
                                    sweep_key="sweeps", input_set=None,
                                    detail=f"sweep task: {r.error_message}"
                                    + (f" while running {where}" if where else "")))
        return findings, notes
    if status == ResultStatus.EAGER_ERROR:  # the program itself died in eager mode at some sweep point
        notes.append(new_finding(FindingKind.SWEEP_EAGER_ERROR, base, sweep="sweeps",
                                 detail=f"sweep task: {r.error_message}"))
        return findings, notes
    if status != ResultStatus.OK:
        notes.append(new_finding(FindingKind.INTERNAL_ERROR, base, detail=r.error_message,
                                 error=r.error, sweep="sweeps"))
        return findings, notes
    done: set[str] = set()
    unconfirmed: dict[str, InputSetVerdict] = {}
    nondet = False
    for s in r.input_sets:
        if s.kind == NONDETERMINISTIC and not nondet:
            nondet = True
            notes.append(new_finding(FindingKind.NONDETERMINISTIC, base, input_set=s.name, sweep=s.sweep,
                                     detail=s.detail))
        if s.ok:
            continue
        cat = s.sweep_category or ""
        if cat in done:
            continue
        if not s.confirmed:
            unconfirmed.setdefault(cat, s)
            continue
        done.add(cat)
        if s.set == "special" and "special" in base_failed and s.kind not in _CRASH_KINDS:
            notes.append(new_finding(FindingKind.SWEEP_ALSO_BASE, base, input_set=s.name, sweep=s.sweep,
                                     detail=f"[{s.sweep}] fails on special values, as the model's own dtype and "
                                     f"sizes already do: {s.detail}"))
            continue
        crash = s.kind in _CRASH_KINDS
        kind = (FindingKind.parse(s.kind) if crash
                else FindingKind.SEED_MISCOMPILE if variant.seed else FindingKind.MISCOMPILE)
        more: dict = {"error": s.error} if crash else {}
        if s.compile_extra:
            more["compile_extra"] = s.compile_extra
        if s.warmup_file:
            more["warmup_file"] = s.warmup_file
        findings.append(new_finding(kind, base, input_set=s.name, sweep=s.sweep, sweep_key=s.sweep_key,
                                    sweep_dtype=s.sweep_dtype, shapes=s.shapes,
                                    max_abs_err=s.max_abs_err, max_rel_err=s.max_rel_err,
                                    leaf=s.leaf, detail=f"[{s.sweep}] {s.detail}",
                                    failing_inputs=s.inputs_file, referee=s.referee, **more))
    for cat, s in unconfirmed.items():
        if cat not in done:
            notes.append(new_finding(FindingKind.SWEEP_UNCONFIRMED, base, input_set=s.name, sweep=s.sweep,
                                     detail=f"[{s.sweep}] failed in a batch of sweep points but not alone: "
                                     f"{s.detail}"))
    return findings, notes


def make_sweep_tasks(bundle: Path, manifest: Manifest, sweep: SweepConfig | dict, *, backends, devices, seed: int,
                     input_kinds, scratch: Path, first_backend: str) -> list[Task]:
    """Worker tasks (kind ``sweep``) for every variant x backend x device: the seeds' first."""
    base_cfg = dataclasses.replace(SweepConfig.from_dict(sweep) if isinstance(sweep, dict) else sweep, seed=seed)
    tasks = []
    for device in devices:
        for backend in backends:
            for v in sorted(manifest.variants, key=lambda v: not v.seed):
                if not v.seed and base_cfg.points <= 0 and base_cfg.dynamic != "all":
                    continue  # seeds only
                tid = f"{v.id}@{backend}@{device}#sweep"
                safe = re.sub(r"[^A-Za-z0-9_.-]", "_", tid.replace("@", "__"))
                # one sample for a graph's variants: those compiled to the same code share its compiles (Inductor's
                # code cache), so a point costs a compile per distinct code, not per variant
                cfg = dataclasses.replace(base_cfg, full=v.seed, key=v.graph)
                if v.dtypes is not None:  # built by rules that hold only at these dtypes: sweep no others
                    cfg = dataclasses.replace(cfg, dtypes=tuple(d for d in cfg.dtypes if d in v.dtypes))
                if v.fixed_sizes:  # built by a rule that wrote its sizes in: equivalent at them only
                    cfg = dataclasses.replace(cfg, sizes=(), dynamic="none")
                tasks.append(Task(
                    id=tid, variant=v.id, file=str((bundle / v.file).resolve()),
                    backend=backend, device=device, seed=seed, input_kinds=list(input_kinds),
                    is_param=list(manifest.graph(v.graph).is_param) or None, kind=TaskKind.SWEEP,
                    sweep=cfg.to_dict(),
                    save_eager=str(scratch / "eager" / f"{v.id}__{device}") if backend == first_backend else None,
                    save_compiled=str(scratch / "sweeps" / safe),
                ))
    return tasks


def is_sweep_result(r: Result) -> bool:
    return bool(r.sweep_task) or r.is_sweep


def judge_sweep_results(manifest: Manifest, results: list[Result], tasks: list[Task], scratch: Path,
                        first_backend: str | None, base_findings: list | None = None
                        ) -> tuple[list[Finding], list[Finding], dict]:
    """Findings, notes and stats from the sweep tasks' results (the counterpart of
    judging.judge_results): compiler bugs per sweep category, and unsound rewrites where a
    variant's eager output at a sweep point differs from its seed's at the same point."""

    findings: list[Finding] = []
    notes: list[Finding] = []
    seeds = manifest.seed_of
    by_id = {t.id: t for t in tasks}
    failed: dict[tuple, set[str]] = {}  # (variant, backend, device) -> input set kinds failed by the ordinary task
    for f in base_findings or []:
        if f.kind in (FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE) and f.input_set:
            failed.setdefault((f.variant, f.backend, f.device), set()).add(str(f.input_set).split("-")[0])
    stats = {"tasks": 0, "judged": 0, "failing": 0, "compiles": 0, "seconds": 0.0, "truncated": 0}
    for r in results:
        v = manifest.variant(r.variant)
        base = {"variant": v.id, "graph": v.graph, "backend": r.backend, "device": r.device,
                "rules": list(v.rules), "mode": v.mode, "ops": sorted(set(manifest.graph(v.graph).op_names))}
        f, n = sweep_findings(base, v, r, by_id.get(r.task),
                              failed.get((v.id, r.backend, r.device), set()))
        findings += f
        notes += n
        s = r.sweep or {}
        stats["tasks"] += 1
        for k in ("judged", "failing", "compiles"):
            stats[k] += int(s.get(k) or 0)
        stats["seconds"] += float(s.get("seconds") or 0.0)
        stats["truncated"] += int(bool(s.get("truncated")))
        if not v.seed and r.backend == first_backend and r.status == ResultStatus.OK:
            sd = scratch / "eager" / f"{seeds[v.graph]}__{r.device}"
            vd = scratch / "eager" / f"{v.id}__{r.device}"
            for e in r.input_sets:
                verdict = unsound_verdict(sd / f"{e.name}.pt", vd / f"{e.name}.pt", v, manifest)
                if verdict is not None:
                    notes.append(new_finding(FindingKind.UNSOUND_REWRITE, base, input_set=e.name,
                                             sweep=e.sweep, max_abs_err=verdict.max_abs_err,
                                             detail=f"[{e.sweep}] {verdict.detail}"))
                    break
    stats["seconds"] = round(stats["seconds"], 3)
    findings = collapse(findings, manifest.seed_ids)
    return findings, notes, stats


def _symptom(f: Finding) -> str:
    if f.kind in _CRASH_KINDS + (FindingKind.TIMEOUT.value,):
        return f"{f.kind}:{(f.error or {}).get('type', '')}"
    d = (f.detail or "")
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


def collapse(findings: list, seeds: frozenset[str]) -> list[Finding]:
    """One sweep finding per (kind, backend, device, symptom, dtype kind): the seed's (else the
    first) stands for the others, listed in `sweep_also_seen`. A bug at the model's own dtype that
    sweeps meet at every size and in every variant (NaN handling, say) is one finding, not one per
    variant x dtype x size; rules are left out because sweep findings are not minimized."""
    findings = [as_finding(x) for x in findings]
    groups: dict[tuple, int] = {}  # -> its finding's index in out
    out: list[Finding] = []
    for f in sorted(map(as_finding, findings), key=lambda f: f.variant not in seeds):
        kind = FindingKind.MISCOMPILE.value if f.kind == FindingKind.SEED_MISCOMPILE else f.kind
        key = (kind, f.backend, f.device, _symptom(f), _dtype_kind(f.sweep_dtype))
        if key in groups:
            g = out[groups[key]]
            out[groups[key]] = g.with_(sweep_also_seen=[*(g.sweep_also_seen or []), f"{f.variant}: {f.sweep}"])
            continue
        groups[key] = len(out)
        out.append(f)
    return out
