"""Confirm warm, prove cold: each candidate's repro.py re-run alone, in a warm worker first, and once, at the end, in a fresh process; one that does not reproduce becomes a `flaky` note, a timeout that is not a compile hang a `resource` note.

confirm_all (before clustering and minimization): the repro.py of each candidate runs alone in a warm worker
with fresh compile state (runners/exec/alone.py), in parallel; a fresh process decides where that did not
reproduce it (state may have leaked), and for a process crash or a crash that may depend on the process's
state (needs_fresh). prove_all (after minimization): each root cause's final repro.py (its representative's)
runs once in a fresh process, as a user would run it; one that does not reproduce there is a note, however it
ran warm, and the root cause's next member is proven instead.

A timeout is a hang, and a compiler bug, only if alone, with HANG_FACTOR times the limit it first ran past,
compile still does not finish while eager ran fast: a big graph that compiles slowly (a model with hundreds
of ops on one core, a sweep compiling one program per dtype) finishes within that and is a `resource` note."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from eqsat_test.runners import REPO_ROOT
from eqsat_test.runners.exec import prover
from eqsat_test.runners.exec.pool import PoolOptions, run_tasks
from eqsat_test.runners.findings.meta import write_meta
from eqsat_test.runners.protocol import past
from eqsat_test.runners.records import Finding, FindingKind, ResultStatus, Task, TaskKind, as_finding

# kinds a repro.py can re-check by itself (device-mismatch and config-mismatch need two runs)
CONFIRMABLE = (FindingKind.MISCOMPILE.value, FindingKind.SEED_MISCOMPILE.value, FindingKind.COMPILE_CRASH.value,
               FindingKind.RUN_CRASH.value, FindingKind.TIMEOUT.value, FindingKind.GRAD_MISCOMPILE.value,
               FindingKind.EAGER_BUG.value, FindingKind.COMPILED_NONDETERMINISTIC.value, FindingKind.CAPTURE_CRASH.value)
EAGER_SHARE = 0.1  # a timeout is a compile hang only if eager ran within this share of the limit
WARM, FRESH = "warm worker", "fresh process"  # where a confirmation ran (confirmation.where)
HANG_FACTOR = 4.0  # a timeout is re-run alone with this many times its limit: one that finishes was slow, not hung
LOADED_SHARE = 0.5  # "alone": while a timeout is re-run, other work may keep at most this share of the cores busy
# A crash whose message names a cache, a file, a lock, memory or the device's context may come from what the
# process did before: such a crash is confirmed in a fresh process, never in a warm worker.
STATEFUL_CRASH = re.compile(r"\b(cache|caches|lock|locked|cuda)\b|No such file|Too many open files|out of memory"
                            r"|OutOfMemory|device-side|ImportError|ModuleNotFoundError|BrokenPipe|\[Errno", re.I)


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


def repro_report(rc: int | None, out: str, seconds: float, timed_out: bool, load: float | None) -> dict:
    """A repro.py run as the verdicts read it: {"rc", "seconds", "eager_seconds", "timed_out", "verdict", "output",
    "load"} from its exit code and output."""
    m = re.search(r"eager: ran twice in ([0-9.]+) s", out)
    verdict = re.findall(r"^VERDICT: ([A-Z]+(?:-[A-Z]+)*)", out, flags=re.M)
    return {"rc": rc, "seconds": round(seconds, 3), "timed_out": timed_out,
            "eager_seconds": float(m.group(1)) if m else None, "verdict": verdict[-1] if verdict else None,
            "output": out[-4000:], "load": None if load is None else round(load, 2)}


def run_repro(folder: Path, timeout: float, threads: int = 1) -> dict:
    """Run folder/repro.py alone in a fresh process, as repro_report says; load: the cores other work kept busy
    meanwhile (OtherLoad)."""
    meter = OtherLoad()
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True,
                           timeout=timeout, env=_env(threads), start_new_session=True)
        rc, out, timed_out = p.returncode, p.stdout + p.stderr, False
    except subprocess.TimeoutExpired as e:
        rc, timed_out = None, True
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    return repro_report(rc, out, time.perf_counter() - t0, timed_out, meter.cores())


def fresh_repro(folder: Path, timeout: float, threads: int = 1, device: str | None = "cpu") -> dict:
    """Run folder/repro.py alone in a fresh process forked from a prover (runners/exec/prover.py: torch imported,
    nothing run), as repro_report says; a real `python repro.py` (run_repro) where no prover answers, and for a
    finding on a GPU: a forked child cannot initialise CUDA once its parent's imports touched it."""
    if (device or "cpu") != "cpu":
        return run_repro(folder, timeout, threads)
    meter = OtherLoad()
    try:
        p = prover.server(threads)
    except Exception:  # noqa: BLE001 - no prover: the plain way
        return run_repro(folder, timeout, threads)
    got = p.run(folder, timeout)
    if got is None:
        return run_repro(folder, timeout, threads)
    return repro_report(got["rc"], got["output"], got["seconds"], got["timed_out"], meter.cores())


def warm_repros(folders: list[Path], ids: list[str], pool: PoolOptions, limit: float) -> list[dict]:
    """Each folder's repro.py alone in a warm worker of the pool (runners/exec/alone.py: fresh compile state),
    `pool.jobs` at a time, as repro_report says; a worker that died or hung gives rc None (its output lost)."""
    tasks = [Task(id=f"confirm:{i}", variant=i, backend="", device="cpu", kind=TaskKind.REPRO, folder=str(d),
                  timeout_s=limit) for d, i in zip(folders, ids)]
    out = []
    for r in run_tasks(tasks, pool):
        got = r.repro if r.status == ResultStatus.OK else None
        if got is not None:
            out.append(repro_report(got["rc"], got["output"], got["seconds"], False, None))
        else:  # the worker hung, died or failed on its own: nothing said of the program
            out.append(repro_report(None, r.error_message, float(r.elapsed or 0.0),
                                    r.status == ResultStatus.TIMEOUT, None) | {"worker": r.status.value})
    return out


def needs_fresh(f: Finding) -> str | None:
    """Why a finding is confirmed in a fresh process rather than a warm worker (None: warm first): a process
    crash (it would take the worker down), or a crash whose message says it may hang on the process's state."""
    err = f.error or {}
    if f.kind == FindingKind.RUN_CRASH and err.get("type") == "ProcessCrash":
        return "a process crash"
    if f.kind in (FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH) and STATEFUL_CRASH.search(
            f"{err.get('type', '')}: {err.get('message', '')}"):
        return "a crash that may depend on the process's state"
    return None


def rerun_sweep_alone(f: Finding, tasks: list[Task], timeout: float, env: dict | None = None) -> dict | None:
    """A sweep task's timeout re-run alone: the same task on one fresh worker, as run_repro reports it (its
    repro.py holds the model's own inputs, not the swept ones that hung); None where the task is unknown."""
    task = next((t for t in tasks if str(t.id).endswith("#sweep") and t.variant == f.variant
                 and t.backend == f.backend and t.device == f.device), None)
    if task is None:
        return None
    meter = OtherLoad()
    t0 = time.perf_counter()
    results = run_tasks([task], PoolOptions(jobs=1, timeout=timeout, env=dict(env or {})))
    r = results[0] if results else None
    timed_out = r is not None and r.status == ResultStatus.TIMEOUT
    hung_in = r.phase if r is not None and timed_out else None
    return {"rc": None if timed_out else 0, "seconds": round(time.perf_counter() - t0, 3), "timed_out": timed_out,
            # the sweep's eager runs come before each compile: a hang in compile is past them
            "eager_seconds": 0.0 if hung_in == "compile" else None, "verdict": None,
            "output": (r.error_message if r is not None else "")[-4000:],
            "load": round(meter.cores(), 2)}


def outcome(f: Finding | Mapping, r: dict, timeout: float) -> tuple[str, str]:
    """("confirmed" | "flaky" | "resource", why) for finding `f` and its repro run `r`."""
    f = as_finding(f)
    kind = f.kind
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
                   detail=f"{why}; claimed {f.kind}: {(f.detail or '')}")


def unconfirmed_timeouts(written: list) -> tuple[list[Finding], int]:
    """Timeouts claimed without a lone re-run (--no-confirm) become `resource` notes; returns the findings
    and how many."""
    out, n = [], 0
    for f in map(as_finding, written):
        if f.kind == FindingKind.TIMEOUT and not f.confirmed:
            f = not_alone(f, "not re-run alone (confirmation off): a timeout is claimed only once it hangs alone")
            n += 1
            if f.repro:
                write_meta(Path(f.repro).parent, f, update=True)
        out.append(f)
    return out, n


def confirm_all(written: list, out: Path, *, timeout: float, jobs: int = 1, deadline: float | None = None,
                log=lambda s: None, tasks: list[Task] | None = None, env: dict | None = None,
                warm: bool = True) -> tuple[list[Finding], dict]:
    """Re-run each written finding's repro.py alone: first in a warm worker of the pool (runners/exec/alone.py:
    fresh compile state; `jobs` at a time), and in a fresh process where that did not reproduce it (state may
    have leaked), where the finding is a process crash or a crash that may depend on the process's state
    (needs_fresh), or where `warm` is off; timeouts after the others, one at a time, in a fresh process with
    every core (a sweep's as its own task: `tasks`). Confirmed findings get `confirmed: true`; the rest become
    notes: kind `flaky` or `resource`, `claimed_kind` keeps what was claimed; a timeout not re-run (the time
    budget spent) is a `resource` note too. `confirmation.where` says which run decided. meta.json is
    updated. Returns the findings, in their order, and stats."""
    written = [as_finding(f) for f in written]
    todo = [i for i, f in enumerate(written) if f.kind in CONFIRMABLE]
    threads = prover.proof_threads(jobs)
    stats = {"checked": 0, "confirmed": 0, FindingKind.FLAKY.value: 0, FindingKind.RESOURCE.value: 0, "skipped": 0,
             "warm": 0, "fresh": 0, "seconds": 0.0}
    t0 = time.perf_counter()

    def folder(i: int) -> Path:
        return out / "findings" / str(written[i].id)

    def limit(i: int) -> float:
        return HANG_FACTOR * timeout if written[i].kind == FindingKind.TIMEOUT else timeout

    def skipped(i: int) -> bool:
        """Past the deadline (or, for a timeout, too little of it left): not re-run; a timeout becomes a note."""
        f = written[i]
        timed_out = f.kind == FindingKind.TIMEOUT
        left = None if deadline is None else deadline - time.monotonic()
        short = timed_out and left is not None and not past(deadline) and left < limit(i)
        if not (past(deadline) or short):
            return False
        stats["skipped"] += 1
        f = f.with_(confirmed=None)
        if timed_out:
            f = not_alone(f, (f"not re-run alone (the time budget left, {left:.0f} s, is less than {HANG_FACTOR:g} "
                              f"times the limit)" if short else "not re-run alone (the time budget was spent)")
                          + ": a timeout is claimed only once it hangs alone")
            stats[FindingKind.RESOURCE.value] += 1
            write_meta(folder(i), f, update=True)
        written[i] = f
        return True

    def settle(i: int, r: dict, where: str, before: str | None = None) -> None:
        f = written[i]
        verdict, why = outcome(f, r, limit(i))
        stats["checked"] += 1
        stats[verdict] += 1
        stats["warm" if where == WARM else "fresh"] += 1
        conf = {"outcome": verdict, "why": why, "where": where, "seconds": r["seconds"],
                "output_tail": r["output"][-1500:]}
        if where == FRESH:  # the proof (prove_all) need not run this repro.py again
            conf["repro_sha"] = repro_sha(folder(i))
        if before:
            conf["warm_attempt"] = before
        f = f.with_(confirmation=conf)
        if verdict == "confirmed":
            f = f.with_(confirmed=True)
        else:
            f = f.with_(claimed_kind=f.kind, kind=FindingKind.parse(verdict).value, confirmed=False)
            f = f.with_(detail=f"{why}; claimed {f.claimed_kind}: {(f.detail or '')}")
            log(f"{f.id}: {verdict} ({why})")
        written[i] = f
        write_meta(folder(i), f, update=True)

    def fresh(item: tuple[int, str | None]) -> None:
        i, before = item
        settle(i, fresh_repro(folder(i), limit(i), threads, written[i].device), FRESH, before)

    plain = [i for i in todo if written[i].kind != FindingKind.TIMEOUT and not skipped(i)]
    cold: list[tuple[int, str | None]] = [(i, None) for i in plain if not warm or needs_fresh(written[i])]
    hot = [i for i in plain if warm and not needs_fresh(written[i])]
    if hot:
        pool = PoolOptions(jobs=max(1, jobs), timeout=timeout, env=dict(env or {}))
        for i, r in zip(hot, warm_repros([folder(i) for i in hot], [str(written[i].id) for i in hot], pool, timeout)):
            verdict, why = outcome(written[i], r, timeout)
            if verdict == "confirmed":
                settle(i, r, WARM)
            else:  # state may have leaked, into the first run or into this one: a fresh process decides
                cold.append((i, f"{verdict} in a warm worker ({why}); re-run in a fresh process"))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(fresh, cold))
    for i in todo:  # one at a time, with every core, once nothing else of ours runs: a hang alone, or load
        if written[i].kind == FindingKind.TIMEOUT and not skipped(i):
            alone = rerun_sweep_alone(written[i], tasks or [], limit(i), env) if written[i].sweep else None
            settle(i, alone if alone is not None else run_repro(folder(i), limit(i), os.cpu_count() or 1), FRESH)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return written, stats


def repro_sha(folder: Path) -> str:
    """What a proof proves: repro.py and the inputs beside it (minimization rewrites them)."""
    h = hashlib.sha256()
    for p in sorted([folder / "repro.py", *folder.glob("*.pt")]):
        if p.is_file():
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def prove_all(confirmed: list, clusters: list, out: Path, *, timeout: float, jobs: int = 1,
              deadline: float | None = None, log=lambda s: None) -> tuple[list[Finding], dict]:
    """The proof, once per root cause, at the end: the repro.py of each cluster's representative (the one its
    summary line names: the minimized program where there is one) run alone in a fresh process, the clusters'
    at once, `jobs` at a time. One that does not reproduce there becomes a note, as in confirm_all (`flaky` or
    `resource`; `claimed_kind`), and the cluster's next member is proven instead, until one reproduces or none
    is left. A finding whose confirmation already ran this very repro.py in a fresh process (repro_sha) counts
    as proven without a run; a timeout is never run again (its confirmation was a fresh process with several
    times the limit). Past the deadline the warm confirmations stand and the proof says so. Returns the
    findings, in their order, each with `confirmation.proof`, and stats."""
    found = [as_finding(f) for f in confirmed]
    stats = {"proven": 0, "not_reproduced": 0, "already": 0, "skipped": 0, "seconds": 0.0}
    threads = prover.proof_threads(jobs)
    t0 = time.perf_counter()
    lines: dict[str, list[int]] = {}  # cluster -> its members, the representative first
    reps = {c.key: c.representative for c in clusters}
    for i, f in enumerate(found):
        if f.confirmed and f.kind in CONFIRMABLE:
            lines.setdefault(str(f.cluster or f.id), []).append(i)
    for key, members in lines.items():
        members.sort(key=lambda i: found[i].id != reps.get(key))

    def prove(i: int) -> bool:
        f = found[i]
        d = out / "findings" / str(f.id)
        conf = dict(f.confirmation or {})
        if f.kind == FindingKind.TIMEOUT or (conf.get("where") == FRESH and conf.get("repro_sha") == repro_sha(d)):
            stats["already"] += 1
            found[i] = f.with_(confirmation={**conf, "proof": {"outcome": "confirmed", "why":
                               "its confirmation ran this repro.py in a fresh process"}})
            return True
        r = fresh_repro(d, timeout, threads, f.device)
        verdict, why = outcome(f, r, timeout)
        proof = {"outcome": verdict, "why": why, "where": FRESH, "seconds": r["seconds"],
                 "output_tail": r["output"][-1500:]}
        f = f.with_(confirmation={**conf, "proof": proof})
        if verdict == "confirmed":
            stats["proven"] += 1
        else:
            stats["not_reproduced"] += 1
            f = f.with_(claimed_kind=f.kind, kind=FindingKind.parse(verdict).value, confirmed=False,
                        detail=f"its repro.py, in a fresh process: {why}; claimed {f.kind}: {(f.detail or '')}")
            log(f"{f.id}: {verdict} in a fresh process ({why})")
        found[i] = f
        write_meta(d, f, update=True)
        return verdict == "confirmed"

    left = {key: list(members) for key, members in lines.items()}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        while left and not past(deadline):  # a round: the next candidate of each cluster not yet proven
            keys = list(left)
            done = list(ex.map(prove, [left[k].pop(0) for k in keys]))
            left = {k: left[k] for k, ok in zip(keys, done) if not ok and left[k]}
    for members in lines.values():  # the members not run: the proof of their root cause stands for them
        proven = next((found[i].id for i in members if (found[i].confirmation or {}).get("proof", {}).get("outcome")
                       == "confirmed"), None)
        for i in members:
            f = found[i]
            if "proof" in (f.confirmation or {}) or not f.confirmed:
                continue
            stats["skipped"] += 1
            why = (f"one proof per root cause: {proven}'s repro.py reproduced in a fresh process" if proven else
                   "not run: the time budget was spent (confirmed in a warm worker only)")
            found[i] = f.with_(confirmation={**(f.confirmation or {}), "proof": {"outcome": "not run", "why": why}})
            write_meta(out / "findings" / str(f.id), found[i], update=True)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return found, stats
