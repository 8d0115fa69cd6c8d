"""Execution half of the pipeline: run a bundle's variants eager and compiled, judge, write findings.

Needs torch, numpy, click and jinja2 only (no egglog): bundles made on one host run on another.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from runners.exec.pool import PoolOptions, run_tasks
from runners.findings.write import COMPILER_BUG_KINDS, signature, versions, write_finding


@dataclass
class ExecOptions:
    backends: tuple = ("inductor",)
    devices: tuple = ("cpu",)
    jobs: int = 1
    timeout: float = 300.0
    seed: int = 0
    input_kinds: tuple = ("given", "random", "special")
    env: dict = field(default_factory=dict)
    collect_env: bool = True
    progress: bool = True
    minimize: bool = True  # shrink each compiler-bug finding while it still fails (runners/findings/minimize.py)
    minimize_checks: int = 12  # subprocess checks per finding
    minimize_max_findings: int = 16  # findings beyond this many keep their full program only
    configs: dict = field(default_factory=dict)  # runners/checks/configs.py: {backend spec: config name}, siblings of backends[0]
    config_overrides: dict = field(default_factory=dict)  # {config name: Inductor overrides}
    perf: bool = False  # runners/checks/perf.py: time compiled variants; slow-variant notes
    perf_threshold: float = 3.0  # x the siblings' median compiled time
    artifacts: object = None  # runners/artifacts.ArtifactOptions (debug rerun, minifier, bisector); None: off
    sweep: dict | None = None  # runners/checks/sweep_plan.SweepConfig fields (dtype/size sweeps); None: off
    batch: int = 1  # >1: this many variants per compile, suspects confirmed alone; 0: by graph size (runners/exec/batch.py)


class BadBundle(Exception):
    """A folder that is not a usable bundle (exit code 4)."""


def read_manifest(bundle: Path) -> dict:
    m = bundle / "manifest.json"
    if not m.is_file():
        raise BadBundle(f"{bundle}: not a bundle (no manifest.json)")
    try:
        manifest = json.loads(m.read_text())
    except json.JSONDecodeError as e:
        raise BadBundle(f"{m}: not valid JSON: {e}") from e
    if manifest.get("format") != "eqsat-bundle/1":
        raise BadBundle(f"{m}: unknown bundle format {manifest.get('format')!r}")
    return manifest


def make_tasks(bundle: Path, manifest: dict, opts: ExecOptions, scratch: Path) -> list[dict]:
    graphs = {g["id"]: g for g in manifest["graphs"]}
    cross_device = len(set(opts.devices)) > 1  # keep every output: the device-mismatch judge compares them
    tasks = []
    for device in opts.devices:
        for bi, backend in enumerate(opts.backends):
            for v in manifest["variants"]:
                tid = f"{v['id']}@{backend}@{device}"
                safe = tid.replace("@", "__").replace("+", "_").replace("=", "_").replace(",", "_")
                tasks.append({
                    "id": tid, "variant": v["id"], "file": str((bundle / v["file"]).resolve()),
                    "backend": backend, "device": device, "seed": opts.seed,
                    "input_kinds": list(opts.input_kinds), "is_param": graphs[v["graph"]]["is_param"],
                    "save_eager": str(scratch / "eager" / f"{v['id']}__{device}") if bi == 0 else None,
                    "save_compiled": str(scratch / "compiled" / safe),
                    "save_outputs": cross_device,
                    "perf": {"budget": 0.15} if opts.perf else None,
                })
    return tasks


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="task", file=sys.stderr, dynamic_ncols=True,
                disable=None)  # None: plain when stderr is not a terminal


def judge_results(manifest: dict, results: list[dict], scratch: Path) -> tuple[list[dict], list[dict]]:
    """Turn worker results into findings (compiler bugs and informational notes)."""
    import torch

    from runners.oracle.judge import compare_eager

    findings: list[dict] = []
    notes: list[dict] = []
    variants = {v["id"]: v for v in manifest["variants"]}
    seeds = {v["graph"]: v["id"] for v in manifest["variants"] if v["seed"]}
    for r in results:
        v = variants[r["variant"]]
        base = {"variant": v["id"], "graph": v["graph"], "backend": r["backend"], "device": r["device"],
                "rules": v["rules"], "mode": v["mode"], "ops": sorted(set(_ops_of(v, manifest)))}
        status = r["status"]
        if status in ("compile-crash", "run-crash", "timeout", "process-crash"):
            kind = "run-crash" if status == "process-crash" else status
            findings.append({**base, "kind": kind, "error": r.get("error"), "input_set": r.get("input_set"),
                             "detail": (r.get("error") or {}).get("message", "")})
            continue
        if status == "eager-error":
            if v["seed"]:
                notes.append({**base, "kind": "seed-error", "detail": r["error"]["message"]})
            else:
                notes.append({**base, "kind": "unsound-rewrite", "detail":
                              f"variant raises in eager mode: {r['error']['type']}: {r['error']['message']}"})
            continue
        if status == "internal-error":
            notes.append({**base, "kind": "internal-error", "detail": r["error"]["message"],
                          "error": r["error"]})
            continue
        for s in r["input_sets"]:
            if s["kind"] == "nondeterministic":
                notes.append({**base, "kind": "nondeterministic", "input_set": s["name"], "detail": s["detail"]})
                break
            if not s["ok"]:
                findings.append({**base, "kind": "seed-miscompile" if v["seed"] else "miscompile",
                                 "input_set": s["name"], "max_abs_err": s["max_abs_err"],
                                 "max_rel_err": s["max_rel_err"], "leaf": s.get("leaf"), "detail": s["detail"],
                                 "failing_inputs": s.get("inputs_file")})
                break
        # Unsound rewrite: this variant's eager output vs its seed's, on the same input sets.
        if not v["seed"] and r["backend"] == manifest.get("_first_backend"):
            sd = scratch / "eager" / f"{seeds[v['graph']]}__{r['device']}"
            vd = scratch / "eager" / f"{v['id']}__{r['device']}"
            for s in r["input_sets"]:
                a, b = sd / f"{s['name']}.pt", vd / f"{s['name']}.pt"
                if a.is_file() and b.is_file():
                    verdict = compare_eager(torch.load(a, weights_only=False), torch.load(b, weights_only=False))
                    if not verdict.ok and _declared_edge_difference(verdict, v, manifest):
                        break
                    if not verdict.ok:
                        notes.append({**base, "kind": "unsound-rewrite", "input_set": s["name"],
                                      "max_abs_err": verdict.max_abs_err, "detail": verdict.detail})
                        break
    # Across devices: compiled cpu vs compiled cuda of the same variant and input set (runners/checks/devices.py).
    if len({r["device"] for r in results}) > 1:
        from runners.checks.devices import cross_device_findings
        findings += cross_device_findings(manifest, results, scratch, findings, notes)
    by_task = {(r["variant"], r["backend"], r["device"]): r for r in results}
    for f in findings:  # where Inductor left its code; read only when the finding is written
        r = by_task.get((f["variant"], f["backend"], f["device"]), {})
        for k in ("kernel_files", "kernel_source_file"):
            if r.get(k) and not f.get(k):
                f[k] = r[k]
    return findings, notes


def _declared_edge_difference(verdict, v: dict, manifest: dict) -> bool:
    """A variant that differs from its seed only in NaN/inf positions, made with rules declared
    ieee-edge or approximate, does what its rules say: expected, not an unsound rewrite."""
    numerics = manifest["rules"].get("numerics", {})
    declared = {numerics.get(name) for name in v.get("rules", [])}
    return "NaN/Inf positions" in verdict.detail and bool(declared & {"ieee-edge", "approximate"})


def _ops_of(v: dict, manifest: dict) -> list[str]:
    g = next(g for g in manifest["graphs"] if g["id"] == v["graph"])
    return g.get("op_names", [])


def pool_options(opts: ExecOptions) -> PoolOptions:
    """The worker pool `execute_bundle` runs its tasks on (`runners.execute.prestart` takes the same)."""
    return PoolOptions(jobs=opts.jobs, timeout=opts.timeout, env=opts.env)


def execute_bundle(bundle: str | Path, out: str | Path, opts: ExecOptions, log=lambda s: None) -> dict:
    """Execute every variant of `bundle` under every backend x device; write findings under `out`."""
    bundle, out = Path(bundle), Path(out)
    manifest = read_manifest(bundle)
    manifest["_first_backend"] = opts.backends[0]
    scratch = out / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    tasks = make_tasks(bundle, manifest, opts, scratch)
    if opts.sweep is not None:  # dtype/size sweeps: tasks of their own, the longest first (runners/checks/sweeps.py)
        from runners.checks.sweeps import make_sweep_tasks
        tasks = make_sweep_tasks(bundle, manifest, opts.sweep, backends=opts.backends, devices=opts.devices,
                                 seed=opts.seed, input_kinds=opts.input_kinds, scratch=scratch,
                                 first_backend=opts.backends[0]) + tasks
    bar = _progress(len(tasks), opts.progress)
    counts = {"bugs": 0}

    def on_result(r: dict) -> None:
        if r["status"] not in ("ok", "eager-error") or any(not s["ok"] for s in r["input_sets"]):
            counts["bugs"] += 1
        if bar is not None:
            bar.set_postfix_str(f"suspicious={counts['bugs']}")
            bar.update(1)

    t0 = time.perf_counter()
    batch_stats = None
    try:
        pool = pool_options(opts)
        if opts.batch != 1:  # K variants per compile, suspects confirmed alone (runners/exec/batch.py)
            from runners.exec.batch import auto_batch_size, batch_group, run_batched
            ops = {g["id"]: g.get("ops", 0) for g in manifest["graphs"]}
            k = opts.batch if opts.batch > 1 else (lambda g: auto_batch_size(ops.get(g[0], 0)))
            results, batch_stats = run_batched(tasks, pool, k, batch_group(manifest), on_result=on_result,
                                               log=log, batch_timeout=opts.timeout * 4)
        else:
            results = run_tasks(tasks, pool, on_result=on_result, log=log)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    sweep_results = [r for r in results if str(r.get("task", "")).endswith("#sweep")]
    results = [r for r in results if not str(r.get("task", "")).endswith("#sweep")]
    findings, notes = judge_results(manifest, results, scratch)
    sweep_stats = None
    if sweep_results:
        from runners.checks.sweeps import judge_sweep_results
        sf, sn, sweep_stats = judge_sweep_results(manifest, sweep_results, tasks, scratch, opts.backends[0], findings)
        findings += sf
        notes += sn
    min_stats = {"seconds": 0.0, "checks": 0}
    if opts.minimize and findings:
        from runners.findings.minimize import minimize_findings
        t1 = time.perf_counter()
        # sweep findings keep their full program: minimize.py re-runs candidates on the model's own inputs
        minimize_findings([f for f in findings if not f.get("sweep")], bundle, manifest, tasks, opts,
                          scratch / "minimize", log=log)
        min_stats = {"seconds": round(time.perf_counter() - t1, 3),
                     "checks": sum(f.get("min_checks") or 0 for f in findings)}
    if opts.configs:  # verdicts across Inductor configurations: config-mismatch (runners/checks/configs.py)
        from runners.checks.configs import config_judge
        findings = config_judge(manifest, results, findings, opts.backends[0], opts.configs, opts.config_overrides)
    findings = dedupe(findings)
    from runners.findings.triage import annotate
    perf_stats = None
    if opts.perf:  # slow-variant notes, confirmed A/B (runners/checks/perf.py)
        from runners.checks.perf import slow_variant_findings, spread
        t1 = time.perf_counter()
        import os
        cores = os.cpu_count() or 1  # the workers' threads (runners/exec/pool.py): one share of the cores each
        slow, screened = slow_variant_findings(manifest, results, bundle, threshold=opts.perf_threshold, env=opts.env,
                                               threads=max(1, cores // max(1, opts.jobs)) if opts.jobs > 1 else cores,
                                               log=log)
        notes += slow
        perf_stats = {"spread": spread(manifest, results), "screened": screened, "threshold": opts.perf_threshold,
                      "seconds_timing": round(sum((r.get("perf") or {}).get("seconds", 0.0) for r in results), 3),
                      "seconds_confirm": round(time.perf_counter() - t1, 3)}
    dyn = {(r["variant"], r["backend"], r["device"]): r.get("dynamo") for r in results}
    for f in findings + notes:  # graph breaks / recompiles of the task, for triage
        d = dyn.get((f.get("variant"), f.get("backend"), f.get("device")))
        if d and "dynamo" not in f:
            f["dynamo"] = d
    annotate(findings)
    annotate(notes)
    env_text = None
    written = []
    for k, f in enumerate(findings, 1):
        fid = f"{k:03d}-{f['kind']}-{f['variant']}"
        if env_text is None and opts.collect_env:
            env_text = __import__("runners.findings.write", fromlist=["collect_env"]).collect_env()
        d = write_finding(out, fid, f, bundle, manifest, env_text=env_text or "")
        f["repro"] = str(d / "repro.py")
        f["id"] = fid
        written.append(f)
    for k, n in enumerate([n for n in notes if n["kind"] == "slow-variant"], len(written) + 1):
        from runners.checks.perf import write_slow_variant
        n["id"] = f"{k:03d}-slow-variant-{n['variant']}"
        n["folder"] = str(write_slow_variant(out, n["id"], n, bundle, manifest))
    art_stats = None
    if opts.artifacts is not None and getattr(opts.artifacts, "enabled", False) and written:
        from runners.findings.artifacts import collect_all
        art_stats = collect_all(written, out, opts.artifacts, log=log)
    timings: dict[str, float] = {}
    for r in results:
        for k, v in (r.get("timings") or {}).items():
            timings[k] = timings.get(k, 0.0) + v
    executed = sum(1 for r in results if r["status"] != "internal-error")
    report = {
        "model": manifest["model"], "torch_version": versions()["torch"],
        "variants": sum(1 for v in manifest["variants"] if not v["seed"]),
        "executed": executed,
        "findings": [_public(f) for f in written] + [_public(n) for n in notes],
        "stats": {"tasks": len(tasks), "wall_seconds": round(wall, 3),
                  "exec_timings": {k: round(v, 3) for k, v in timings.items()},
                  "backends": list(opts.backends), "devices": list(opts.devices),
                  "input_kinds": list(opts.input_kinds),
                  "compiler_bugs": len(written), "notes": len(notes),
                  "internal_errors": sum(1 for n in notes if n["kind"] == "internal-error"),
                  "batch": batch_stats,
                  "minimize": min_stats, "perf": perf_stats, "artifacts": art_stats, "sweep": sweep_stats,
                  "triage": {c: sum(1 for f in written if f.get("triage") == c) for c in
                             sorted({f.get("triage") for f in written if f.get("triage")})}},
    }
    (out / "results.json").write_text(json.dumps({"report": report, "raw": results + sweep_results}, indent=1,
                                                 default=str))
    return report


def dedupe(findings: list[dict]) -> list[dict]:
    """One finding per signature, with a count and the variants it was seen in."""
    by_sig: dict[str, dict] = {}
    for f in findings:
        sig = signature(f)
        if sig in by_sig:
            kept = by_sig[sig]
            if _better_representative(f, kept):  # the seed, or the smaller program, represents the bug
                by_sig[sig] = {**f, "signature": sig, "count": kept["count"],
                               "also_seen_in": [kept["variant"], *kept["also_seen_in"]]}
                kept = by_sig[sig]
            else:
                kept["also_seen_in"].append(f["variant"])
            kept["count"] += 1
        else:
            by_sig[sig] = {**f, "signature": sig, "count": 1, "also_seen_in": []}
    return list(by_sig.values())


def _better_representative(f: dict, kept: dict) -> bool:
    def rank(x: dict) -> tuple:
        return (x["kind"] != "seed-miscompile", len(x.get("min_ops") or x.get("ops") or []))
    return rank(f) < rank(kept)


def _public(f: dict) -> dict:
    return {k: v for k, v in f.items() if k not in ("failing_inputs", "minimized_file", "artifacts")}


def exit_code(report: dict) -> int:
    """1: compiler-bug candidates; else 3 if eqsat-test itself failed on some task; else 0."""
    if any(f["kind"] in COMPILER_BUG_KINDS for f in report["findings"]):
        return 1
    return 3 if report["stats"].get("internal_errors") else 0
