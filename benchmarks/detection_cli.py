"""Detection through the whole tool: `eqsat-test SEED --backend FILE.py:FN` for every planted fault and the identity backend, exit codes and findings read back (benchmarks/oracle_detection.py runs it).

Output faults (examples/backends/faulty_backends.py: the graph runs eagerly, its outputs are then
corrupted) run on benchmarks/fault_seeds/multi_out.py, whose outputs each fault can reach; the
strides fault must be noted, not flagged. Graph faults (examples/backends/graph_faults.py: Inductor
with one planted pass bug, wrong only for some values, dtypes, shapes or layouts) each run on the
seed it is meant for, whose own inputs do not trigger it: the special input sets, the dtype or size
sweeps or the rewrites must. A graph fault counts where it was planted in at least one compile of
the run (EQSAT_FAULT_LOG). The identity backend runs on every seed: each finding is a false alarm.
Default options of the tool, but 8 variants (`variants`) and sweeps of the seeds only (--sweep-points 0), no
minimizing and no artifacts; every finding is confirmed alone from its repro.py as usual.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO, machine, table
from eqsat_test.runners.records import BUG_KINDS

SEEDS = REPO / "benchmarks" / "fault_seeds"
OUTPUT_FAULTS = REPO / "examples" / "backends" / "faulty_backends.py"
GRAPH_FAULTS = REPO / "examples" / "backends" / "graph_faults.py"
# graph fault -> the seed it is meant for (and what must reach its trigger)
GRAPH_SEEDS = {
    "sigmoid_as_exp_ratio": ("gated_mlp", "special set (huge values)"),
    "maximum_drops_nan": ("max_blend", "special set (NaN)"),
    "softmax_without_max": ("attention_scores", "special set (huge values)"),
    "int_div_floors": ("ratio", "integer dtype sweep"),
    "half_exp_bias": ("exp_gain", "float16/bfloat16 sweep"),
    "sum_drops_tail": ("row_sum", "size sweep (15, 31, 63, 127)"),
    "cumsum_restarts": ("running_total", "size sweep (65, 127, 128, 129)"),
    "transposed_operand_misread": ("square_blend", "rewrites (a transpose moved in)"),
}
OUTPUT_FAULT_NAMES = ("one_wrong_element", "small_doubled", "argmax_off_by_one", "nan_to_zero", "inf_sign_flip",
                      "wrong_dtype", "stale_outputs", "transposed_stride")
OPTIONS = ["--sweep-points", "0", "--no-artifacts", "--no-minimize", "--seed", "0"]


def one_run(seed: Path, backend: str, jobs: int, log: Path | None = None, variants: int = 8) -> dict:
    """eqsat-test on `seed` with `backend`: exit code, seconds, finding kinds, the first finding's detail."""
    out = Path(tempfile.mkdtemp(prefix="eqsat-detect-"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if log is not None:
        env["EQSAT_FAULT_LOG"] = str(log)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "run", str(seed), "--backend", backend, "--json",
                        "--out", str(out / "run"), "-j", str(jobs), "-n", str(variants), *OPTIONS], capture_output=True, text=True, env=env,
                       cwd=REPO)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        report = {"findings": []}
    bugs = [f for f in report.get("findings", []) if f.get("kind") in BUG_KINDS]
    return {"rc": p.returncode, "seconds": time.perf_counter() - t0, "kinds": sorted({f["kind"] for f in bugs}),
            "detail": (bugs[0].get("sweep", "") + " " + str(bugs[0].get("input_set")) + ": " + str(bugs[0].get("detail", ""))[:160])
            if bugs else (p.stderr.strip().splitlines() or [""])[-1][:160]}


CLI_GROUPS = ("output", "graph", "identity")


def run_cli(jobs: int = 2, verbose: bool = False, variants: int = 8, only: tuple[str, ...] = CLI_GROUPS) -> None:
    """The runs of the groups `only` (of CLI_GROUPS), then their table and rates."""
    t_start = time.perf_counter()
    rows = []
    groups: dict[str, list] = {"output": [], "graph": [], "identity": []}
    for name in OUTPUT_FAULT_NAMES if "output" in only else ():
        r = one_run(SEEDS / "multi_out.py", f"{OUTPUT_FAULTS.relative_to(REPO)}:{name}", jobs, variants=variants)
        expect = name != "transposed_stride"
        groups["output"].append((name, r, expect))
        rows.append(["output", name, "multi_out", "flag" if expect else "no flag", r["rc"], ",".join(r["kinds"]) or "-",
                     f"{r['seconds']:.0f}", r["detail"]])
        print(f"  output {name}: exit {r['rc']} ({time.perf_counter() - t_start:.0f}s)", file=sys.stderr, flush=True)
    for name, (seed, trigger) in GRAPH_SEEDS.items() if "graph" in only else ():
        log = Path(tempfile.mkstemp(prefix="eqsat-fault-log-")[1])
        r = one_run(SEEDS / f"{seed}.py", f"{GRAPH_FAULTS.relative_to(REPO)}:{name}", jobs, log, variants)
        r["planted"] = sum(int(line.split()[1]) for line in log.read_text().splitlines() if line.strip())
        groups["graph"].append((name, r, True))
        rows.append(["graph", name, f"{seed} ({trigger})", "flag", r["rc"], ",".join(r["kinds"]) or "-",
                     f"{r['seconds']:.0f}", f"planted in {r['planted']} node(s); {r['detail']}"])
        print(f"  graph {name}: exit {r['rc']} ({time.perf_counter() - t_start:.0f}s)", file=sys.stderr, flush=True)
    for seed in sorted(SEEDS.glob("*.py")) if "identity" in only else ():
        r = one_run(seed, f"{OUTPUT_FAULTS.relative_to(REPO)}:identity", jobs, variants=variants)
        groups["identity"].append((seed.stem, r, False))
        rows.append(["identity", "identity", seed.stem, "no flag", r["rc"], ",".join(r["kinds"]) or "-",
                     f"{r['seconds']:.0f}", r["detail"] if r["rc"] else ""])
        print(f"  identity {seed.stem}: exit {r['rc']} ({time.perf_counter() - t_start:.0f}s)", file=sys.stderr, flush=True)

    def rate(items, planted_only=False) -> str:
        todo = [(n, r, e) for n, r, e in items if e and (not planted_only or r.get("planted"))]
        hit = sum(1 for _, r, _ in todo if r["rc"] == 1)
        return f"{hit}/{len(todo)}"
    alarms = sum(1 for _, r, _ in groups["identity"] if r["rc"] == 1)
    errors = sum(1 for g in groups.values() for _, r, _ in g if r["rc"] not in (0, 1))
    strides = next((r for n, r, _ in groups["output"] if n == "transposed_stride"), None)
    print(f"\nthrough the whole tool (eqsat-test -n {variants} {' '.join(OPTIONS)} -j {jobs}); machine: {machine()}; "
          f"{time.perf_counter() - t_start:.0f}s")
    print(table(rows, ["faults", "backend", "seed", "expected", "exit", "bug kinds", "s", "first finding"]) if verbose else
          table([r[:7] for r in rows], ["faults", "backend", "seed", "expected", "exit", "bug kinds", "s"]))
    if "output" in only:
        print(f"output faults detected: {rate(groups['output'])} (the strides fault flagged: "
              f"{'yes' if strides and strides['rc'] == 1 else 'no'}, as it should not be)")
    if "graph" in only:
        print(f"graph faults detected: {rate(groups['graph'], planted_only=True)} of those planted "
              f"({sum(1 for _, r, _ in groups['graph'] if r.get('planted'))}/{len(groups['graph'])} planted)")
    n_id = len(groups["identity"])
    if "identity" in only:
        print(f"identity backend false alarms: {alarms}/{n_id} runs = {100 * alarms / max(n_id, 1):.0f}%")
    print(f"internal errors (exit 3): {errors}")
