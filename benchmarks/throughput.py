"""Throughput: variants checked per minute by eqsat-test vs a naive loop, same models, same variants, one run.

    python benchmarks/throughput.py [--models small,medium,large] [--variants 32] [--naive-sample 8]
        [--config NAME=ARGS ...] [--rules SPEC] [--out DIR]

eqsat-test arm: the real command (`eqsat-test MODEL -n N --json ...`, generation included) in a
subprocess, timed from start to exit. Each `--config NAME="--jobs 2 --batch 4"` adds one arm
with those extra options (default: one arm with eqsat-test's defaults).
Naive arms, on variants of the bundle the first arm wrote (`--naive-sample` of them, spread
evenly; 0 for all), one at a time (benchmarks/naive_check.py: load, eager, torch.compile,
compare): "process per variant" starts a fresh `python` for each (imports torch each time);
"one process" checks them all in one process, a fresh torch.compile after torch._dynamo.reset()
each. Ratios compare rates (variants per minute).
Every arm starts with its own Inductor cache folder holding only the toolchain set-up (as on any
machine that has run torch.compile before), so no arm reuses another's compiles.
eqsat-test does more work per variant than the naive loop (three input sets, eager twice, fp64
reference, the oracle), so the ratio is conservative.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import MODELS, REPO, machine, table  # noqa: E402

# small: the bundled MLP example (~8 ops); medium, large: benchmarks/models/
MODEL_FILES = {"small": REPO / "examples" / "mlp.py", "medium": "medium_block.py", "large": "large_stack.py"}
EQSAT = [sys.executable, "-m", "eqsat_test.runners.cli"]


def _env(cache: Path) -> dict:
    env = dict(os.environ)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


WARM = "import torch\nwith torch.no_grad(): torch.compile(lambda x: (x.relu() * 2).sum(-1))(torch.randn(4, 4))"


def fresh_cache(scratch: Path) -> Path:
    """An Inductor cache folder of this arm's own, holding only the toolchain set-up (compiler and
    vector ISA checks, done once per machine in real use) and none of the variants' compiles."""
    template = scratch / "inductor-template"
    if not template.exists():
        subprocess.run([sys.executable, "-c", WARM], env=_env(template), check=True, capture_output=True)
    cache = Path(tempfile.mkdtemp(prefix="inductor-", dir=scratch))
    shutil.copytree(template, cache, dirs_exist_ok=True)
    return cache


def run_eqsat(model: Path, n: int, extra: list[str], out: Path, rules: list[str], scratch: Path) -> dict:
    cache = fresh_cache(scratch)
    cmd = EQSAT + [str(model), "-n", str(n), "--out", str(out), "--json"] + \
        [a for r in rules for a in ("-r", r)] + extra
    t0, c0 = time.perf_counter(), _children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(cache), cwd=scratch)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    report = json.loads(p.stdout)
    return {"wall": wall, "cpu": cpu, "report": report, "cmd": " ".join(shlex.quote(c) for c in cmd)}


def _children_cpu() -> float:
    """CPU seconds (user + system) of finished child processes and their children: steadier
    than wall time on a shared machine, and what a batch of work costs whatever the load."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_naive(bundle: Path, scratch: Path, sample: int = 0, one_process: bool = False) -> dict:
    """A naive loop over the bundle's variants (every one, or `sample` of them spread evenly; each
    costs about the same, so rates are compared): a fresh process per variant, or, with
    `one_process`, one process checking them one after another."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    files = [bundle / v["file"] for v in manifest["variants"] if not v["seed"]]
    if 0 < sample < len(files):
        files = [files[round(i * (len(files) - 1) / max(1, sample - 1))] for i in range(sample)]
    cache = fresh_cache(scratch)
    check = [sys.executable, str(REPO / "benchmarks" / "naive_check.py")]
    words: list[str] = []
    t0, c0 = time.perf_counter(), _children_cpu()
    for group in ([files] if one_process else [[f] for f in files]):
        p = subprocess.run(check + [str(f) for f in group], capture_output=True, text=True, env=_env(cache),
                           cwd=scratch)
        got = [line.split()[0] for line in p.stdout.strip().splitlines() if line.strip()]
        words += got + ["?"] * (len(group) - len(got))
    verdicts: dict[str, int] = {}
    for w in words:
        verdicts[w] = verdicts.get(w, 0) + 1
    return {"wall": time.perf_counter() - t0, "cpu": _children_cpu() - c0, "variants": len(files),
            "verdicts": verdicts}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="small,medium,large")
    ap.add_argument("--variants", type=int, default=32, help="variants per model (eqsat-test's default: 32)")
    ap.add_argument("--naive-sample", type=int, default=8,
                    help="variants the naive loop checks, spread over the bundle (0: all); rates are compared")
    ap.add_argument("--config", action="append", default=[], help='NAME="extra eqsat-test options"')
    ap.add_argument("--common", default="--no-sweep --no-artifacts --no-minimize",
                    help="options every eqsat-test arm gets (default: check variants only, as the naive loop "
                         "does: no dtype/size sweeps, no minimization or debug reruns of findings)")
    ap.add_argument("--rules", action="append", default=[])
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-naive", action="store_true")
    args = ap.parse_args(argv)
    configs = [(c.split("=", 1)[0], shlex.split(c.split("=", 1)[1])) for c in args.config] or [("eqsat-test", [])]
    configs = [(n, shlex.split(args.common) + extra) for n, extra in configs]
    out = Path(args.out or tempfile.mkdtemp(prefix="eqsat-throughput-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}; load average at start {os.getloadavg()[0]:.1f}")
    rows = []
    for name in args.models.split(","):
        model = MODELS / MODEL_FILES.get(name, name)
        arms = []
        for cname, extra in configs:
            r = run_eqsat(model, args.variants, extra, out / name / cname, args.rules, out)
            rep = r["report"]
            nv = rep["variants"]
            st = rep["stats"]
            print(f"[{name}] {cname}: {r['cmd']}\n    {nv} variants (+ seeds) in {r['wall']:.1f} s; "
                  f"generate {sum(v for k, v in st.get('timings', {}).items() if k in ('load', 'rules', 'capture', 'lift', 'saturate', 'extract', 'render')):.1f} s, "
                  f"execute {st['wall_seconds']:.1f} s; batch {st.get('batch')}; "
                  f"findings {len([f for f in rep['findings'] if f.get('repro')])}", flush=True)
            arms.append((cname, nv, r["wall"], r["cpu"]))
        naives = {}
        if not args.no_naive:
            bundle = out / name / configs[0][0] / "bundle"
            for nname, one in (("naive, process per variant", False), ("naive, one process", True)):
                nv_ = naives[nname] = run_naive(bundle, out, args.naive_sample, one_process=one)
                print(f"[{name}] {nname}: {nv_['variants']} variants in {nv_['wall']:.1f} s "
                      f"({nv_['cpu']:.1f} CPU s) {nv_['verdicts']}", flush=True)
        for cname, nv, wall, cpu in arms:
            rate = 60.0 * nv / wall if wall else 0.0
            crate = 60.0 * nv / cpu if cpu else 0.0
            for nname, naive in (naives.items() or [("-", None)]):
                nrate = 60.0 * naive["variants"] / naive["wall"] if naive else None
                ncrate = 60.0 * naive["variants"] / naive["cpu"] if naive and naive["cpu"] else None
                rows.append([name, cname, nv, f"{wall:.1f}", f"{cpu:.1f}", f"{rate:.1f}", nname,
                             f"{naive['wall']:.1f}" if naive else "-", f"{naive['cpu']:.1f}" if naive else "-",
                             f"{nrate:.1f}" if nrate else "-", f"{rate / nrate:.2f}x" if nrate else "-",
                             f"{crate / ncrate:.2f}x" if ncrate else "-"])
    print(f"\nload average at end {os.getloadavg()[0]:.1f}\n")
    print(table(rows, ["model", "arm", "variants", "eqsat s", "eqsat CPU s", "eqsat var/min", "baseline", "naive s",
                       "naive CPU s", "naive var/min", "ratio (wall)", "ratio (CPU)"]))


if __name__ == "__main__":
    main()
