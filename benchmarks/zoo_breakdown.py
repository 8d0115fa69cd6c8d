"""Where a zoo job's time goes: the real `eqsat-test run MODEL` (as a campaign job runs it), then its stages from the
bundle's manifest and results.json: load, rule library, capture, lift, saturation, extraction, render; execution
(compile per variant: median and first; eager and run), sweeps, confirmation, minimization; and the job's wall time.

    python benchmarks/zoo_breakdown.py MODEL.py [MODEL.py ...] [-n 32] [--device cpu|cuda] [-- EXTRA RUN ARGS]

One row per model, then the stage shares of the summed wall time. On a GPU host:
    python benchmarks/zoo_breakdown.py benchmarks/zoo/*.py -n 32 --device cuda
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GEN = ("load", "rules", "capture", "lift", "saturate", "extract", "render")


def job(model: Path, n: int, device: str, extra: list[str], out: Path) -> dict:
    cmd = [sys.executable, "-m", "eqsat_test.runners.cli", "run", str(model), "-n", str(n), "--device", device,
           "--json", "--out", str(out), *extra]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    row = {"model": model.stem, "rc": p.returncode, "wall": wall}
    if not (out / "results.json").is_file():
        row["why"] = (p.stderr.strip().splitlines() or ["?"])[-1][:160]
        return row
    res = json.loads((out / "results.json").read_text())
    st, raw = res["report"]["stats"], res["raw"]
    man = json.loads((out / "bundle" / "manifest.json").read_text())
    row.update({k: man.get("timings", {}).get(k, 0.0) for k in GEN})
    plain = [r for r in raw if not str(r.get("task", "")).endswith("#sweep") and r.get("timings")]
    comp = [r["timings"].get("compile", 0.0) for r in plain]
    row.update({
        "variants": res["report"]["variants"], "ops": sum(g["ops"] for g in man["graphs"]),
        "internal": st.get("internal_errors", 0), "bugs": st.get("compiler_bugs", 0),
        "exec": st.get("wall_seconds", 0.0), "compile_med": statistics.median(comp) if comp else 0.0,
        "compile_max": max(comp) if comp else 0.0, "compile_sum": sum(comp),
        "eager_sum": sum(r["timings"].get("eager", 0.0) for r in plain),
        "sweeps": (st.get("sweep") or {}).get("seconds", 0.0), "confirm": (st.get("confirm") or {}).get("seconds", 0.0),
        "minimize": (st.get("minimize") or {}).get("seconds", 0.0), "jobs": None})
    return row


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    import torch
    print(f"torch {torch.__version__}, {args.device}, -n {args.n} {' '.join(extra)}, {time.strftime('%Y-%m-%d')}")
    head = (f"{'model':22} {'ops':>4} {'var':>3} {'bugs':>4} {'int':>3} {'wall':>6} | " + " ".join(f"{k:>7}" for k in GEN)
            + f" | {'exec':>6} {'cmp.med':>7} {'cmp.max':>7} {'sweeps':>6} {'confirm':>7} {'minim.':>6}")
    print(head)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in args.models:
            r = job(m, args.n, args.device, extra, Path(tmp) / m.stem)
            rows.append(r)
            if "why" in r:
                print(f"{r['model']:22} rc={r['rc']} {r['why']}", flush=True)
                continue
            print(f"{r['model']:22} {r['ops']:>4} {r['variants']:>3} {r['bugs']:>4} {r['internal']:>3} {r['wall']:6.0f} | "
                  + " ".join(f"{r[k]:7.1f}" for k in GEN)
                  + f" | {r['exec']:6.0f} {r['compile_med']:7.1f} {r['compile_max']:7.1f} {r['sweeps']:6.0f} "
                    f"{r['confirm']:7.0f} {r['minimize']:6.0f}", flush=True)
    done = [r for r in rows if "why" not in r]
    total = sum(r["wall"] for r in done)
    if done and total:
        parts = {k: sum(r[k] for r in done) for k in (*GEN, "exec", "confirm", "minimize")}
        print(f"{len(done)} jobs, {total:.0f} s in all ({total / len(done):.0f} s a job); shares of the wall time: "
              + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in parts.items() if v)
              + f"; compile is {100 * sum(r['compile_sum'] for r in done) / max(1e-9, sum(r['exec'] for r in done)):.0f}%"
                " of the tasks' worker time summed over workers, sweeps excluded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
