"""Performance divergence: time compiled variants (warm, repeated, median) and flag a variant far slower than its siblings (`slow-variant`, informational, confirmed A/B in a fresh process).

Execution side only (torch; no egglog).

How a slow-variant is decided (all of these must hold):
- Timing in the worker (`time_call`): after judging, on the first input set, `WARMUP` calls,
  then calls until `budget` seconds and at least `MIN_REPS` calls; the median per-call time.
- Screening (`screen`): per graph x backend x device with at least 3 timed programs (seed +
  variants), the reference is the median of the programs' medians; a variant is a candidate
  when its median is >= `threshold` x the reference (default 3x) AND at least `min_abs_s`
  slower (default 50 us: below that, launch overhead and timer noise dominate).
- Confirmation (`confirm`): workers run in parallel and share cores, so a candidate is re-timed
  in one fresh subprocess, interleaved with its baseline (the seed, else the median sibling):
  ABAB... blocks, medians per program. It is reported only if the ratio still holds there.
- Attribution: the same A/B run times both programs in eager. If eager is about as slow
  (eager ratio >= threshold / 2), the rewrite made the program itself more expensive
  ("program"); otherwise the compiler handles the equivalent spelling worse ("compiler").
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners import REPO_ROOT
from eqsat_test.runners.exec.backend_code import backend_code, copy_backend_file, script_options
from eqsat_test.runners.records import Finding, FindingKind, Result, ResultStatus, Task, as_finding, new_finding

WARMUP = 3
MIN_REPS = 7
MAX_REPS = 2000
DEFAULT_BUDGET_S = 0.15  # timed seconds per task in the worker
THRESHOLD = 3.0  # x the siblings' median compiled time
MIN_ABS_S = 50e-6  # and at least this much slower, absolute
MIN_GROUP = 3  # programs timed in a group before anything is called slow
CONFIRM_BUDGET_S = 1.0  # seconds per program in the A/B confirmation
CONFIRM_TIMEOUT_S = 240.0

SLOW_VARIANT = FindingKind.SLOW_VARIANT


def _sync(device) -> None:
    import torch
    if getattr(device, "type", str(device)) == "cuda":
        torch.cuda.synchronize()


def time_call(fn, inputs, device="cpu", *, budget: float = DEFAULT_BUDGET_S, min_reps: int = MIN_REPS,
              warmup: int = WARMUP, max_reps: int = MAX_REPS) -> dict:
    """Median per-call time of fn(*inputs), warm: {"median_s", "min_s", "p25_s", "p75_s", "reps"}."""
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            fn(*inputs)
        _sync(device)
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget):
            t0 = time.perf_counter_ns()
            fn(*inputs)
            _sync(device)
            times.append((time.perf_counter_ns() - t0) * 1e-9)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]  # noqa: E731
    return {"median_s": statistics.median(times), "min_s": times[0], "p25_s": q(0.25), "p75_s": q(0.75),
            "reps": len(times)}


def time_task(task: Task, compiled, eager, inputs, device) -> dict:
    """The worker's perf record for a task: compiled and eager timing on one input set."""
    budget = float((task.perf or {}).get("budget", DEFAULT_BUDGET_S))
    t0 = time.perf_counter()
    out = {"compiled": time_call(compiled, inputs, device, budget=budget),
           "eager": time_call(eager, inputs, device, budget=budget / 2)}
    out["seconds"] = round(time.perf_counter() - t0, 4)
    return out


# ----------------------------------------------------------------------------------------------
# screening across siblings


def _group_key(r: Result, manifest: Manifest) -> tuple:
    return (manifest.variant(r.variant).graph, r.backend, r.device)


def spread(manifest: Manifest, results: list[Result]) -> list[dict]:
    """Per graph x backend x device: compiled medians across programs (min, median, max, max/min)."""
    groups: dict[tuple, list[tuple[str, float]]] = {}
    for r in results:
        p = r.perf
        if p and manifest.find_variant(r.variant) is not None:
            groups.setdefault(_group_key(r, manifest), []).append((r.variant, p["compiled"]["median_s"]))
    rows = []
    for (g, b, d), items in sorted(groups.items()):
        ts = sorted(t for _, t in items)
        rows.append({"graph": g, "backend": b, "device": d, "programs": len(ts),
                     "min_us": round(ts[0] * 1e6, 2), "median_us": round(statistics.median(ts) * 1e6, 2),
                     "max_us": round(ts[-1] * 1e6, 2), "max_over_min": round(ts[-1] / ts[0], 3) if ts[0] > 0 else None,
                     "slowest": max(items, key=lambda x: x[1])[0], "fastest": min(items, key=lambda x: x[1])[0]})
    return rows


def screen(manifest: Manifest, results: list[Result], *, threshold: float = THRESHOLD,
           min_abs_s: float = MIN_ABS_S) -> list[dict]:
    """Candidates: {"variant", "baseline", "graph", "backend", "device", "ratio", "slow_s", "ref_s"}."""
    groups: dict[tuple, list[Result]] = {}
    for r in results:
        if r.perf and r.status == ResultStatus.OK and manifest.find_variant(r.variant) is not None:
            groups.setdefault(_group_key(r, manifest), []).append(r)
    out = []
    for (g, b, d), rs in groups.items():
        if len(rs) < MIN_GROUP:
            continue
        t = {r.variant: (r.perf or {})["compiled"]["median_s"] for r in rs}
        ref = statistics.median(t.values())
        slow = {v for v, x in t.items() if x >= threshold * ref and x - ref >= min_abs_s}
        if not slow:
            continue
        seed = next((v for v in t if manifest.variant(v).seed), None)
        if seed is not None and seed not in slow:
            baseline = seed
        else:
            ok = sorted((x, v) for v, x in t.items() if v not in slow)
            baseline = ok[len(ok) // 2][1] if ok else min(t, key=t.get)
        for v in sorted(slow):
            if v == baseline:
                continue
            out.append({"variant": v, "baseline": baseline, "graph": g, "backend": b, "device": d,
                        "ratio": t[v] / ref, "slow_s": t[v], "ref_s": ref, "baseline_s": t[baseline],
                        "group": {k: round(x * 1e6, 2) for k, x in sorted(t.items())}})
    return out


# ----------------------------------------------------------------------------------------------
# confirmation: A/B in one fresh process


def confirm(slow_file: str, base_file: str, backend: str, device: str = "cpu", *, blocks: int = 4,
            budget: float = CONFIRM_BUDGET_S, timeout: float = CONFIRM_TIMEOUT_S, env: dict | None = None,
            threads: int = 1) -> dict:
    """Time two programs A/B interleaved in one fresh process: {"compiled": {"slow", "base"},
    "eager": {...}} medians in seconds, or {"error": why}. `threads`: CPU threads, as the
    workers had them (one per worker when several share the cores: oversubscribed OpenMP
    threads make timings meaningless)."""
    repo = str(REPO_ROOT)
    script = render("perf_ab.py.j2", repo=repo, device=device, backend=backend, slow=slow_file, base=base_file,
                    blocks=blocks, budget=budget / blocks, threads=int(threads))
    e = dict(os.environ)
    e.update(env or {})
    e["OMP_NUM_THREADS"] = str(int(threads))
    try:
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=e)
    except subprocess.TimeoutExpired:
        return {"error": f"A/B timing timed out after {timeout:.0f} s"}
    for line in p.stdout.splitlines():
        if line.startswith("@@AB@@"):
            return json.loads(line[len("@@AB@@"):])
    return {"error": f"A/B timing failed (exit {p.returncode}): {p.stderr.strip().splitlines()[-1:] or ''}"}


def slow_variant_findings(manifest: Manifest, results: list[dict], bundle: Path, *, threshold: float = THRESHOLD,
                          min_abs_s: float = MIN_ABS_S, confirm_ab: bool = True, env: dict | None = None,
                          threads: int = 1, log=lambda s: None) -> tuple[list[Finding], list[dict]]:
    """(slow-variant notes, all screened candidates with their confirmation)."""
    notes, screened = [], []
    for c in screen(manifest, results, threshold=threshold, min_abs_s=min_abs_s):
        v, b = manifest.variant(c["variant"]), manifest.variant(c["baseline"])
        rec = dict(c)
        if confirm_ab:
            log(f"perf: {c['variant']} looks {c['ratio']:.1f}x slower compiled than its siblings; confirming A/B")
            ab = confirm(str(bundle / v.file), str(bundle / b.file), c["backend"], c["device"], env=env,
                         threads=threads)
            rec["ab"] = ab
            if "error" in ab:
                rec["confirmed"] = False
                screened.append(rec)
                continue
            ratio = ab["compiled"]["slow"] / max(ab["compiled"]["base"], 1e-12)
            eager_ratio = ab["eager"]["slow"] / max(ab["eager"]["base"], 1e-12)
            slow_s, base_s = ab["compiled"]["slow"], ab["compiled"]["base"]
            rec["confirmed"] = ratio >= threshold and slow_s - base_s >= min_abs_s
        else:
            ratio, slow_s, base_s = c["slow_s"] / max(c["baseline_s"], 1e-12), c["slow_s"], c["baseline_s"]
            eager_ratio = None
            rec["confirmed"] = ratio >= threshold and slow_s - base_s >= min_abs_s
        screened.append(rec)
        if not rec["confirmed"]:
            continue
        attribution = "compiler" if eager_ratio is None or eager_ratio < threshold / 2 else "program"
        detail = (f"compiled {slow_s * 1e6:.1f} us vs {base_s * 1e6:.1f} us for {c['baseline']} "
                  f"({ratio:.1f}x slower; threshold {threshold:g}x and {min_abs_s * 1e6:.0f} us)")
        if eager_ratio is not None:
            detail += f"; eager ratio {eager_ratio:.2f}x -> " + (
                "the compiler handles this spelling worse" if attribution == "compiler"
                else "the rewritten program itself is more expensive")
        notes.append(new_finding(
            SLOW_VARIANT, variant=c["variant"], graph=c["graph"], backend=c["backend"],
            device=c["device"], rules=list(v.rules), mode=v.mode,
            ops=sorted(set(manifest.graph(c["graph"]).op_names)),
            baseline=c["baseline"], baseline_rules=list(b.rules), ratio=round(ratio, 3),
            eager_ratio=round(eager_ratio, 3) if eager_ratio is not None else None,
            compiled_us=round(slow_s * 1e6, 2), baseline_us=round(base_s * 1e6, 2),
            screen_ratio=round(c["ratio"], 3), group_us=c["group"], attribution=attribution,
            threshold=threshold, min_abs_us=min_abs_s * 1e6, threads=threads, detail=detail))
    return notes, screened


def perf_repro_source(note: Finding | Mapping) -> str:
    note = as_finding(note)
    prelude, backend_expr = backend_code(note.backend)
    opts, config = script_options(note.backend)
    return render("perf_repro.py.j2", variant=note.variant, baseline=note.baseline, backend=note.backend,
                  backend_expr=backend_expr, backend_prelude=prelude, options=opts, config=config, device=note.device,
                  compiled_us=note.compiled_us, baseline_us=note.baseline_us, ratio=note.ratio,
                  threshold=note.threshold, threads=int(note.threads or 1))


def write_slow_variant(out: Path, fid: str, note: Finding, bundle: Path, manifest: Manifest) -> Path:
    """OUT/findings/<fid>/: variant.py, baseline.py, the inputs they load, perf_repro.py (meta.json: the caller's,
    findings/meta.py)."""
    import shutil
    d = out / "findings" / fid
    d.mkdir(parents=True, exist_ok=True)
    graph = manifest.graph(note.graph)
    shutil.copy(bundle / manifest.variant(note.variant).file, d / "variant.py")
    shutil.copy(bundle / manifest.variant(note.baseline).file, d / "baseline.py")
    shutil.copy(bundle / graph.inputs_file, d / graph.inputs_file)
    copy_backend_file(note.backend, d)  # perf_repro.py imports it by path; the copy where that is gone
    (d / "perf_repro.py").write_text(perf_repro_source(note))
    return d
