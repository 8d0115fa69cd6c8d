"""Confirm before claiming: each candidate's standalone repro.py is re-run alone in a fresh process; one that does not reproduce becomes a `flaky` note, a timeout that is not a compile hang a `resource` note.

A timeout is a hang, and a compiler bug, only if alone, with HANG_FACTOR times the limit it first ran past,
compile still does not finish while eager ran fast: a big graph that compiles slowly (a model with hundreds
of ops on one core, a sweep compiling one program per dtype) finishes within that and is a `resource` note."""
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
from eqsat_test.runners.protocol import past
from eqsat_test.runners.records import Finding, FindingKind, ResultStatus, Task, as_finding

# kinds a repro.py can re-check by itself (device-mismatch and config-mismatch need two runs)
CONFIRMABLE = (FindingKind.MISCOMPILE.value, FindingKind.SEED_MISCOMPILE.value, FindingKind.COMPILE_CRASH.value,
               FindingKind.RUN_CRASH.value, FindingKind.TIMEOUT.value, FindingKind.GRAD_MISCOMPILE.value,
               FindingKind.EAGER_BUG.value, FindingKind.COMPILED_NONDETERMINISTIC.value, FindingKind.CAPTURE_CRASH.value)
EAGER_SHARE = 0.1  # a timeout is a compile hang only if eager ran within this share of the limit
HANG_FACTOR = 4.0  # a timeout is re-run alone with this many times its limit: one that finishes was slow, not hung
LOADED_SHARE = 0.5  # "alone": while a timeout is re-run, other work may keep at most this share of the cores busy


def _env(threads: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["OMP_NUM_THREADS"] = str(threads)
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat), None where unknown."""
    try:
        with open("/proc/stat") as fh:
            parts = [int(x) for x in fh.readline().split()[1:9]]
        return (sum(parts) - parts[3] - parts[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait
    except (OSError, ValueError, IndexError):
        return None


def _children_seconds() -> float:
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class OtherLoad:
    """Cores that other work kept busy while something of ours ran (a repro, a task re-run): the machine's
    busy CPU time less our own finished children's, per wall second. Where /proc/stat is missing, the
    1-minute load average at the end, less one for our own process."""

    def __init__(self) -> None:
        self.t0, self.busy0, self.own0 = time.monotonic(), _busy_seconds(), _children_seconds()

    def cores(self) -> float:
        busy = _busy_seconds()
        if busy is None or self.busy0 is None:
            try:
                return max(0.0, os.getloadavg()[0] - 1.0)
            except (OSError, AttributeError):
                return 0.0
        wall = max(time.monotonic() - self.t0, 1e-3)
        return max(0.0, (busy - self.busy0 - (_children_seconds() - self.own0)) / wall)


def loaded(load: float, cores: int | None = None) -> bool:
    """Whether other work kept more than LOADED_SHARE of the cores busy: a timeout seen then is no hang alone."""
    return load > LOADED_SHARE * max(1, cores or os.cpu_count() or 1)


def run_repro(folder: Path, timeout: float, threads: int = 1) -> dict:
    """Run folder/repro.py alone: {"rc", "seconds", "eager_seconds", "timed_out", "output", "load"}; load:
    the cores other work kept busy meanwhile (OtherLoad)."""
    meter = OtherLoad()
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True,
                           timeout=timeout, env=_env(threads), start_new_session=True)
        rc, out, timed_out = p.returncode, p.stdout + p.stderr, False
    except subprocess.TimeoutExpired as e:
        rc, timed_out = None, True
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    m = re.search(r"eager: ran twice in ([0-9.]+) s", out)
    verdict = re.findall(r"^VERDICT: ([A-Z]+(?:-[A-Z]+)*)", out, flags=re.M)
    return {"rc": rc, "seconds": round(time.perf_counter() - t0, 3), "timed_out": timed_out,
            "eager_seconds": float(m.group(1)) if m else None, "verdict": verdict[-1] if verdict else None,
            "output": out[-4000:], "load": round(meter.cores(), 2)}


def rerun_sweep_alone(f: dict, tasks: list[Task], timeout: float, env: dict | None = None) -> dict | None:
    """A sweep task's timeout re-run alone: the same task on one fresh worker, as run_repro reports it (its
    repro.py holds the model's own inputs, not the swept ones that hung); None where the task is unknown."""
    from eqsat_test.runners.exec.pool import PoolOptions, run_tasks  # (exec is below findings; here: only for sweeps)
    task = next((t for t in tasks if str(t.id).endswith("#sweep") and t.variant == f.get("variant")
                 and t.backend == f.get("backend") and t.device == f.get("device")), None)
    if task is None:
        return None
    meter = OtherLoad()
    t0 = time.perf_counter()
    results = run_tasks([task], PoolOptions(jobs=1, timeout=timeout, env=dict(env or {})))
    r = results[0] if results else None
    timed_out = r is not None and r.status == ResultStatus.TIMEOUT
    hung_in = r.extra.get("phase") if r is not None and timed_out else None
    return {"rc": None if timed_out else 0, "seconds": round(time.perf_counter() - t0, 3), "timed_out": timed_out,
            # the sweep's eager runs come before each compile: a hang in compile is past them
            "eager_seconds": 0.0 if hung_in == "compile" else None, "verdict": None,
            "output": (r.error_message if r is not None else "")[-4000:],
            "load": round(meter.cores(), 2)}


def outcome(f: dict, r: dict, timeout: float) -> tuple[str, str]:
    """("confirmed" | "flaky" | "resource", why) for finding `f` and its repro run `r`."""
    kind = f["kind"]
    if kind == FindingKind.TIMEOUT and r.get("load") is not None and loaded(r["load"]) and r["timed_out"]:
        return FindingKind.RESOURCE.value, (f"the machine was loaded while it was re-run (load {r['load']:.1f} from "
                                            f"other work on {os.cpu_count()} cores): not alone, so no hang is claimed;"
                                            f" re-run it on an idle machine to confirm")
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
    want = ("MISCOMPILE" if kind in (FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE, FindingKind.GRAD_MISCOMPILE) else
            "EAGER-BUG" if kind == FindingKind.EAGER_BUG else
            "COMPILED-NONDETERMINISTIC" if kind == FindingKind.COMPILED_NONDETERMINISTIC else "CRASH")
    if r["rc"] == 1 and r["verdict"] == want:
        return "confirmed", f"repro.py exits 1 alone ({want.lower()})"
    if want == "CRASH" and r["rc"] is not None and r["rc"] < 0 and r["eager_seconds"] is not None:
        return "confirmed", f"repro.py dies with signal {-r['rc']} alone after eager ran"
    if r["rc"] == 0:
        return FindingKind.FLAKY.value, "alone, repro.py finds eager and compiled in agreement"
    return FindingKind.FLAKY.value, f"alone, repro.py exited {r['rc']} with verdict {r['verdict'] or 'none'} (claimed {kind})"


def not_alone(f: Finding, why: str) -> Finding:
    """A timeout that was not re-run alone becomes a `resource` note: load is never a compiler bug."""
    return f.with_(claimed_kind=f.kind, kind=FindingKind.RESOURCE.value, confirmed=False,
                   confirmation={"outcome": FindingKind.RESOURCE.value, "why": why},
                   detail=f"{why}; claimed {f.kind}: {f.get('detail', '')}")


def unconfirmed_timeouts(written: list) -> tuple[list[Finding], int]:
    """Timeouts claimed without a lone re-run (--no-confirm) become `resource` notes; returns the findings
    and how many."""
    out, n = [], 0
    for f in map(as_finding, written):
        if f.kind == FindingKind.TIMEOUT and not f.confirmed:
            f = not_alone(f, "not re-run alone (confirmation off): a timeout is claimed only once it hangs alone")
            n += 1
            if f.repro:
                _update_meta(Path(f.repro).parent, f)
        out.append(f)
    return out, n


def confirm_all(written: list, out: Path, *, timeout: float, jobs: int = 1, deadline: float | None = None,
                log=lambda s: None, tasks: list[Task] | None = None,
                env: dict | None = None) -> tuple[list[Finding], dict]:
    """Re-run each written finding's repro.py alone (`jobs` at a time; timeouts after the others, one at a
    time, a sweep's as its own task: `tasks`). Confirmed findings get `confirmed: true`; the rest become
    notes: kind `flaky` or `resource`, `claimed_kind` keeps what was claimed; a timeout not re-run (the
    time budget spent) is a `resource` note too. meta.json is updated. Returns the findings, in their
    order, and stats."""
    written = [as_finding(f) for f in written]
    todo = [i for i, f in enumerate(written) if f.kind in CONFIRMABLE]
    threads = max(1, (os.cpu_count() or 1) // max(1, jobs))
    stats = {"checked": 0, "confirmed": 0, FindingKind.FLAKY.value: 0, FindingKind.RESOURCE.value: 0, "skipped": 0,
             "seconds": 0.0}
    t0 = time.perf_counter()

    def one(i: int, threads: int = threads) -> None:
        f = written[i]
        folder = out / "findings" / str(f.id)
        timed_out = f.kind == FindingKind.TIMEOUT
        limit = HANG_FACTOR * timeout if timed_out else timeout
        left = None if deadline is None else deadline - time.monotonic()
        short = timed_out and left is not None and not past(deadline) and left < limit
        if past(deadline) or short:
            stats["skipped"] += 1
            f = f.with_(confirmed=None)
            if timed_out:
                f = not_alone(f, (f"not re-run alone (the time budget left, {left:.0f} s, is less than {HANG_FACTOR:g} "
                                  f"times the limit)" if short else "not re-run alone (the time budget was spent)")
                              + ": a timeout is claimed only once it hangs alone")
                stats[FindingKind.RESOURCE.value] += 1
                _update_meta(folder, f)
            written[i] = f
            return
        r = None
        if timed_out and f.sweep:
            r = rerun_sweep_alone(f, tasks or [], limit, env)
        if r is None:
            r = run_repro(folder, limit, threads)
        verdict, why = outcome(f, r, limit)
        stats["checked"] += 1
        stats[verdict] += 1
        f = f.with_(confirmation={"outcome": verdict, "why": why, "seconds": r["seconds"],
                                  "output_tail": r["output"][-1500:]})
        if verdict == "confirmed":
            f = f.with_(confirmed=True)
        else:
            f = f.with_(claimed_kind=f.kind, kind=FindingKind.parse(verdict).value, confirmed=False)
            f = f.with_(detail=f"{why}; claimed {f.claimed_kind}: {f.get('detail', '')}")
            log(f"{f.id}: {verdict} ({why})")
        written[i] = f
        _update_meta(folder, f)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(one, [i for i in todo if written[i].kind != FindingKind.TIMEOUT]))
    for i in todo:  # one at a time, with every core, once nothing else of ours runs: a hang alone, or load
        if written[i].kind == FindingKind.TIMEOUT:
            one(i, os.cpu_count() or 1)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return written, stats


def _update_meta(folder: Path, f: Finding) -> None:
    meta = folder / "meta.json"
    if meta.is_file():
        m = json.loads(meta.read_text())
        m.update({k: f[k] for k in ("kind", "claimed_kind", "confirmed", "confirmation", "detail") if k in f})
        meta.write_text(json.dumps(m, indent=1, default=str))
