"""Confirm before claiming: each candidate's standalone repro.py is re-run alone in a fresh process; one that does not reproduce becomes a `flaky` note, a timeout that is not a compile hang a `resource` note."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from eqsat_test.runners import REPO_ROOT
from eqsat_test.runners.exec.protocol import past
from eqsat_test.runners.records import FindingKind

# kinds a repro.py can re-check by itself (device-mismatch and config-mismatch need two runs)
CONFIRMABLE = (FindingKind.MISCOMPILE.value, FindingKind.SEED_MISCOMPILE.value, FindingKind.COMPILE_CRASH.value,
               FindingKind.RUN_CRASH.value, FindingKind.TIMEOUT.value, FindingKind.EAGER_BUG.value)
EAGER_SHARE = 0.1  # a timeout is a compile hang only if eager ran within this share of the limit


def _env(threads: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["OMP_NUM_THREADS"] = str(threads)
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_repro(folder: Path, timeout: float, threads: int = 1) -> dict:
    """Run folder/repro.py alone: {"rc", "seconds", "eager_seconds", "timed_out", "output"}."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True,
                           timeout=timeout, env=_env(threads), start_new_session=True)
        rc, out, timed_out = p.returncode, p.stdout + p.stderr, False
    except subprocess.TimeoutExpired as e:
        rc, timed_out = None, True
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    m = re.search(r"eager: ran twice in ([0-9.]+) s", out)
    verdict = re.findall(r"^VERDICT: ([A-Z]+)", out, flags=re.M)
    return {"rc": rc, "seconds": round(time.perf_counter() - t0, 3), "timed_out": timed_out,
            "eager_seconds": float(m.group(1)) if m else None, "verdict": verdict[-1] if verdict else None,
            "output": out[-4000:]}


def outcome(f: dict, r: dict, timeout: float) -> tuple[str, str]:
    """("confirmed" | "flaky" | "resource", why) for finding `f` and its repro run `r`."""
    kind = f["kind"]
    if kind == FindingKind.TIMEOUT:
        eager = r["eager_seconds"]
        if r["timed_out"] and eager is not None and eager <= EAGER_SHARE * timeout:
            return "confirmed", f"alone, compile ran past {timeout:.0f} s while eager ran twice in {eager:.2f} s"
        if r["timed_out"]:
            return FindingKind.RESOURCE.value, (f"alone, eager itself took {eager:.1f} s" if eager is not None else
                                                "alone, it timed out before eager finished") + f" (limit {timeout:.0f} s): size, not the compiler"
        return FindingKind.RESOURCE.value, f"alone, it finished in {r['seconds']:.1f} s (limit {timeout:.0f} s): the timeout came from load"
    if r["timed_out"]:
        return FindingKind.RESOURCE.value, f"its repro did not finish within {timeout:.0f} s alone"
    if r["verdict"] == "NONDETERMINISTIC":
        return FindingKind.FLAKY.value, "alone, two eager runs differ: the program is nondeterministic"
    want = ("MISCOMPILE" if kind in (FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE) else
            "EAGER" if kind == FindingKind.EAGER_BUG else "CRASH")  # repro.py prints "VERDICT: EAGER-BUG"
    if r["rc"] == 1 and r["verdict"] == want:
        return "confirmed", f"repro.py exits 1 alone ({want.lower()})"
    if want == "CRASH" and r["rc"] is not None and r["rc"] < 0 and r["eager_seconds"] is not None:
        return "confirmed", f"repro.py dies with signal {-r['rc']} alone after eager ran"
    if r["rc"] == 0:
        return FindingKind.FLAKY.value, "alone, repro.py finds eager and compiled in agreement"
    return FindingKind.FLAKY.value, f"alone, repro.py exited {r['rc']} with verdict {r['verdict'] or 'none'} (claimed {kind})"


def confirm_all(written: list[dict], out: Path, *, timeout: float, jobs: int = 1, deadline: float | None = None,
                log=lambda s: None) -> dict:
    """Re-run each written finding's repro.py alone (`jobs` at a time). Confirmed findings get
    `confirmed: true`; the rest become notes: kind `flaky` or `resource`, `claimed_kind` keeps
    what was claimed. meta.json is updated. Returns stats."""
    todo = [f for f in written if f["kind"] in CONFIRMABLE]
    threads = max(1, (os.cpu_count() or 1) // max(1, jobs))
    stats = {"checked": 0, "confirmed": 0, FindingKind.FLAKY.value: 0, FindingKind.RESOURCE.value: 0, "skipped": 0,
             "seconds": 0.0}
    t0 = time.perf_counter()

    def one(f: dict) -> None:
        if past(deadline):
            stats["skipped"] += 1
            f["confirmed"] = None
            return
        folder = out / "findings" / f["id"]
        r = run_repro(folder, timeout, threads)
        verdict, why = outcome(f, r, timeout)
        stats["checked"] += 1
        stats[verdict] += 1
        f["confirmation"] = {"outcome": verdict, "why": why, "seconds": r["seconds"], "output_tail": r["output"][-1500:]}
        if verdict == "confirmed":
            f["confirmed"] = True
        else:
            f["claimed_kind"], f["kind"], f["confirmed"] = f["kind"], FindingKind.parse(verdict).value, False
            f["detail"] = f"{why}; claimed {f['claimed_kind']}: {f.get('detail', '')}"
            log(f"{f['id']}: {verdict} ({why})")
        meta = folder / "meta.json"
        if meta.is_file():
            m = json.loads(meta.read_text())
            m.update({k: f[k] for k in ("kind", "claimed_kind", "confirmed", "confirmation", "detail") if k in f})
            meta.write_text(json.dumps(m, indent=1, default=str))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(one, todo))
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return stats
