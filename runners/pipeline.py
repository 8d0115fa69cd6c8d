"""Execution half of the pipeline: run a bundle's variants eager and compiled, judge, write findings.

Needs torch, numpy, click and jinja2 only (no egglog): bundles made on one host run on another.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from runners.execute import PoolOptions, run_tasks
from runners.findings import COMPILER_BUG_KINDS, signature, versions, write_finding


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

    from runners.oracle import compare_eager

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
                    if not verdict.ok:
                        notes.append({**base, "kind": "unsound-rewrite", "input_set": s["name"],
                                      "max_abs_err": verdict.max_abs_err, "detail": verdict.detail})
                        break
    return findings, notes


def _ops_of(v: dict, manifest: dict) -> list[str]:
    g = next(g for g in manifest["graphs"] if g["id"] == v["graph"])
    return g.get("op_names", [])


def execute_bundle(bundle: str | Path, out: str | Path, opts: ExecOptions, log=lambda s: None) -> dict:
    """Execute every variant of `bundle` under every backend x device; write findings under `out`."""
    bundle, out = Path(bundle), Path(out)
    manifest = read_manifest(bundle)
    manifest["_first_backend"] = opts.backends[0]
    scratch = out / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    tasks = make_tasks(bundle, manifest, opts, scratch)
    bar = _progress(len(tasks), opts.progress)
    counts = {"bugs": 0}

    def on_result(r: dict) -> None:
        if r["status"] not in ("ok", "eager-error") or any(not s["ok"] for s in r["input_sets"]):
            counts["bugs"] += 1
        if bar is not None:
            bar.set_postfix_str(f"suspicious={counts['bugs']}")
            bar.update(1)

    t0 = time.perf_counter()
    try:
        results = run_tasks(tasks, PoolOptions(jobs=opts.jobs, timeout=opts.timeout, env=opts.env),
                            on_result=on_result, log=log)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    findings, notes = judge_results(manifest, results, scratch)
    findings = dedupe(findings)
    env_text = None
    written = []
    for k, f in enumerate(findings, 1):
        fid = f"{k:03d}-{f['kind']}-{f['variant']}"
        if env_text is None and opts.collect_env:
            env_text = __import__("runners.findings", fromlist=["collect_env"]).collect_env()
        d = write_finding(out, fid, f, bundle, manifest, env_text=env_text or "")
        f["repro"] = str(d / "repro.py")
        f["id"] = fid
        written.append(f)
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
                  "internal_errors": sum(1 for n in notes if n["kind"] == "internal-error")},
    }
    (out / "results.json").write_text(json.dumps({"report": report, "raw": results}, indent=1, default=str))
    return report


def dedupe(findings: list[dict]) -> list[dict]:
    """One finding per signature, with a count and the variants it was seen in."""
    by_sig: dict[str, dict] = {}
    for f in findings:
        sig = signature(f)
        if sig in by_sig:
            by_sig[sig]["count"] += 1
            by_sig[sig]["also_seen_in"].append(f["variant"])
        else:
            by_sig[sig] = {**f, "signature": sig, "count": 1, "also_seen_in": []}
    return list(by_sig.values())


def _public(f: dict) -> dict:
    return {k: v for k, v in f.items() if k not in ("failing_inputs", "minimized_file", "artifacts")}


def exit_code(report: dict) -> int:
    """1: compiler-bug candidates; else 3 if eqsat-test itself failed on some task; else 0."""
    if any(f["kind"] in COMPILER_BUG_KINDS for f in report["findings"]):
        return 1
    return 3 if report["stats"].get("internal_errors") else 0
