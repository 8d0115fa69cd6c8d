"""Campaigns: models x rule sets x backends x devices x seeds, one isolated `eqsat-test run` per job.

A job runs in its own subprocess with a timeout (a crash or hang costs one job), under a supervisor
that kills all its processes if the campaign dies (runners/campaign/supervise.py), on a local pool
or as Ray tasks. The local pool runs one job per core by default, cuda jobs included (compiling is
CPU work), each job with `--jobs K` workers so that jobs x K ~ cores; the processes of cuda jobs
on a GPU are bounded by its free memory. Every outcome goes into the campaign's SQLite store
(runners/campaign/store.py) in one transaction, so a campaign killed at any moment resumes where it stopped.
Imports nothing heavy at module level: torch, egglog and ray stay out of `eqsat-test --help`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import click

from eqsat_test.runners.campaign.batch import BatchProcess
from eqsat_test.runners.campaign.jobs import (
    JobProcess,
    finalize_run,
    job_env,
    kill_marked,
    make_jobs,
    warm_rule_cache,
)
from eqsat_test.runners.campaign.progress import Progress, RunStats
from eqsat_test.runners.campaign.spec import RUNS_DIR, TMP_DIR, Spec
from eqsat_test.runners.protocol import cpu_cores, past

# Imports inside functions: campaign commands start without torch (findings.write and the
# records it pulls in import it); the store and report load them only when they need them.

# ---------------------------------------------------------------------------------------------
# Slots: how many jobs at once, how many workers each, how many cuda jobs per GPU
# ---------------------------------------------------------------------------------------------

GIB = 2 ** 30
CUDA_JOB_BYTES = 4 * GIB  # free GPU memory asked per cuda job running at once
GPU_SAMPLE_S = 5.0


def gpu_ids() -> list[str]:
    """CUDA_VISIBLE_DEVICES entries a job may be given, one per GPU this process may use."""
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        return [d.strip() for d in vis.split(",") if d.strip() and d.strip() != "-1"]
    if not os.path.isdir("/dev"):
        return []
    n = len([d for d in os.listdir("/dev") if d.startswith("nvidia") and d[6:].isdigit()])
    return [str(i) for i in range(n)]


def _count_gpus() -> int:
    return len(gpu_ids())


_FREE_MEM = ("import json, torch\n"
             "print(json.dumps([torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count())]"
             " if torch.cuda.is_available() else None))")


def gpu_free_memory(timeout: float = 120.0) -> list[int] | None:
    """Free bytes per visible GPU, asked of torch in a subprocess (this process keeps no CUDA context),
    else of nvidia-smi; None when neither can tell."""
    try:
        r = subprocess.run([sys.executable, "-c", _FREE_MEM], capture_output=True, text=True, timeout=timeout)
        out = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else None
        if out:
            return [int(x) for x in out]
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        pass
    if shutil.which("nvidia-smi") and os.environ.get("CUDA_VISIBLE_DEVICES") is None:
        try:
            r = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits"],
                               capture_output=True, text=True, timeout=30)
            vals = [int(float(x)) * 2 ** 20 for x in r.stdout.split() if x.strip()]
            return vals or None
        except (OSError, subprocess.SubprocessError, ValueError):
            pass
    return None


@dataclass
class SlotPlan:
    at_once: int  # jobs running at once
    per_job: int  # `--jobs K` of a cpu job (its worker processes)
    threads: int  # OMP threads per worker process
    gpu_ids: list[str] = field(default_factory=list)
    gpu_caps: list[int] = field(default_factory=list)  # cuda jobs at once, per GPU
    gpu_free: list[int] | None = None  # free bytes per GPU when planned (None: unknown)
    per_cuda_job: int = 0  # `--jobs K` of a cuda job (0: as per_job)

    def workers(self, device: str) -> int:
        return (self.per_cuda_job or self.per_job) if device == "cuda" else self.per_job

    def as_dict(self) -> dict:
        return {"jobs_at_once": self.at_once, "jobs_per_run": self.per_job,
                "cuda_jobs_per_run": (self.per_cuda_job or self.per_job) if self.gpu_caps else None,
                "threads": self.threads, "gpu_slots": self.gpu_caps or None,
                "gpu_free_gib": [round(b / GIB, 1) for b in self.gpu_free] if self.gpu_free else None}


def plan_slots(n_workers: int, cores: int, n_cpu_jobs: int, n_cuda_jobs: int, gpus: list[str],
               gpu_free: list[int] | None) -> SlotPlan:
    """Jobs at once and the worker processes each job runs (`--jobs K`), so that jobs x K ~ cores:
    compiling is CPU work, cuda jobs included. At most `n_workers` jobs at once. On each GPU, the
    processes of the cuda jobs on it (jobs x K) at most one per CUDA_JOB_BYTES of its free memory
    (at least one job); where the memory is unknown, cuda jobs are bounded like cpu jobs."""
    n_workers = max(1, n_workers)
    procs: list[float] = []  # GPU processes each GPU has memory for
    caps: list[int] = []
    if n_cuda_jobs:
        for i in range(len(gpus)):
            free = gpu_free[i] if gpu_free is not None and i < len(gpu_free) else None
            procs.append(float("inf") if free is None else max(1, int(free // CUDA_JOB_BYTES)))
            caps.append(int(min(n_workers, procs[-1])))
    runnable = n_cpu_jobs + min(n_cuda_jobs, sum(caps))
    at_once = max(1, min(n_workers, runnable))
    per_job = max(1, cores // at_once)
    per_cuda = 0
    if caps:
        share = -(-n_cuda_jobs // len(caps))  # cuda jobs per GPU, spread evenly
        per_cuda = per_job
        for p, cap in zip(procs, caps):
            together = max(1, min(cap, share, at_once))
            if p != float("inf"):
                per_cuda = min(per_cuda, max(1, int(p // together)))
    return SlotPlan(at_once=at_once, per_job=per_job, threads=max(1, cores // (at_once * per_job)),
                    gpu_ids=list(gpus) if n_cuda_jobs else [], gpu_caps=caps,
                    gpu_free=gpu_free if n_cuda_jobs else None, per_cuda_job=per_cuda)


class GpuSampler:
    """GPU utilisation (%), from nvidia-smi every `interval` seconds on a thread, while a campaign runs."""

    QUERY = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]

    def __init__(self, interval: float = GPU_SAMPLE_S) -> None:
        self.interval = interval
        self.samples: list[tuple[float, list[float]]] = []
        self.available = shutil.which("nvidia-smi") is not None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.t0 = time.time()

    def _sample(self) -> None:
        try:
            r = subprocess.run(self.QUERY, capture_output=True, text=True, timeout=max(5.0, self.interval))
            vals = [float(x) for x in r.stdout.replace(",", " ").split()] if r.returncode == 0 else []
        except (OSError, subprocess.SubprocessError, ValueError):
            vals = []
        if vals:
            self.samples.append((round(time.time() - self.t0, 1), vals))

    def _loop(self) -> None:
        self._sample()
        while not self._stop.wait(self.interval):
            self._sample()

    def start(self) -> "GpuSampler":
        if self.available:
            self._thread = threading.Thread(target=self._loop, name="gpu-util", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> dict | None:
        """{interval_s, samples, mean, max, per_gpu_mean, series}; None without nvidia-smi or samples."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=15)
        if not self.samples:
            return None
        flat = [v for _, vs in self.samples for v in vs]
        n_gpu = max(len(vs) for _, vs in self.samples)
        per = [[vs[i] for _, vs in self.samples if i < len(vs)] for i in range(n_gpu)]
        step = max(1, len(self.samples) // 500)
        return {"interval_s": self.interval, "samples": len(self.samples), "mean": round(sum(flat) / len(flat), 1),
                "max": max(flat), "per_gpu_mean": [round(sum(p) / len(p), 1) for p in per],
                "series": [[t, vs] for t, vs in self.samples[::step]]}


# ---------------------------------------------------------------------------------------------
# Running a campaign
# ---------------------------------------------------------------------------------------------

def run_local(jobs: list, store, out: Path, plan: SlotPlan, campaign_id: str, progress: Progress,
              deadline: float | None, refill=None) -> RunStats:
    """The local pool: at most `plan.at_once` jobs at once (cuda jobs: at most plan.gpu_caps[i] on GPU i),
    each a supervised subprocess with its timeout running `--jobs plan.workers(device)` workers.
    An item of `jobs` is one job (a dict) or a batch of jobs (a list: their programs judged in one process,
    runners/campaign/batch.py; each recorded as it ends, what a batch left unfinished run again).
    `refill(n)`, where given, returns up to n more items whenever a slot would idle before the deadline (a hunt's
    next programs); the pool ends when it returns none and nothing runs. After the deadline no job starts and no
    batch starts its next program; the running ones finish."""
    stats = RunStats()
    tmp_root = out / RUNS_DIR / TMP_DIR
    pending: list[list[dict]] = [j if isinstance(j, list) else [j] for j in jobs]
    pending_left: list[list[dict]] = []  # the jobs the budget kept from starting
    running: dict[int, tuple[list[dict], JobProcess, int | None]] = {}
    free = list(range(plan.at_once))
    on_gpu = [0] * len(plan.gpu_caps)

    def pick_gpu() -> int | None:
        open_ = [i for i, cap in enumerate(plan.gpu_caps) if on_gpu[i] < cap]
        return min(open_, key=lambda i: (on_gpu[i] / plan.gpu_caps[i], i)) if open_ else None

    def top_up() -> None:
        if refill is not None and not past(deadline) and len(pending) < len(free):
            pending.extend(j if isinstance(j, list) else [j] for j in refill(len(free) - len(pending)))

    def record(job: dict, outcome: dict, made: Path, made_in: str) -> None:
        outcome = finalize_run(made, out / RUNS_DIR / job["run_name"], made_in, outcome)
        store.record_job(job, outcome)
        stats.ran += 1
        progress.update(job, outcome, store.counts())

    try:
        top_up()
        while pending or running:
            if past(deadline):
                if pending:
                    stats.budget_spent = True  # no job starts after the budget; the running ones finish
                    pending_left, pending = pending_left + pending, []
                for _, jp, _ in running.values():
                    if isinstance(jp, BatchProcess):
                        jp.stop_after_current()
            while free and pending:
                g = pick_gpu()
                k = next((i for i, b in enumerate(pending) if b[0]["device"] != "cuda" or g is not None), None)
                if k is None:
                    break
                batch = pending.pop(k)
                job = batch[0]
                gpu = g if job["device"] == "cuda" else None
                if gpu is not None:
                    on_gpu[gpu] += 1
                slot = free.pop(0)
                token = f"{job['key'][:16]}-{os.getpid()}-{time.time_ns()}"
                tmp = tmp_root / f"{job['key'][:12]}-{time.time_ns()}"
                env = job_env(token, campaign_id, out / "cache" / f"worker{slot}", plan.threads, job["device"],
                              gpu=plan.gpu_ids[gpu] if gpu is not None else None)
                store.mark_running(batch)
                workers = plan.workers(job["device"])
                running[slot] = (batch, JobProcess(job, tmp, env, jobs=workers) if len(batch) == 1 else
                                 BatchProcess(batch, tmp, env, workers=workers), gpu)
                stats.peak_at_once = max(stats.peak_at_once, len(running))
            for slot in list(running):
                batch, jp, gpu = running[slot]
                ended = jp.poll()
                if isinstance(jp, BatchProcess):
                    for job, outcome, made in jp.harvest():  # each program as it ends
                        record(job, outcome, made, str(made))
                if not ended:
                    continue
                del running[slot]
                free.append(slot)
                if gpu is not None:
                    on_gpu[gpu] -= 1
                if isinstance(jp, BatchProcess):
                    jp.close()
                    for job, outcome, made in jp.harvest():
                        record(job, outcome, made, str(made))
                    pending[:0] = jp.leftovers()
                    shutil.rmtree(jp.run_dir, ignore_errors=True)
                else:
                    record(batch[0], jp.outcome(), jp.run_dir, str(jp.run_dir))
            top_up()
            progress.heartbeat([(*jp.running(), jp.run_dir) if isinstance(jp, BatchProcess) else
                                (jp.job, jp.started, jp.run_dir) for _, jp, _ in running.values()])
            time.sleep(0.1)
    except KeyboardInterrupt:
        stats.interrupted = True
        raise
    finally:
        unfinished = [j["key"] for b in pending_left for j in b]
        for batch, jp, _ in running.values():  # unfinished: not recorded, the next resume runs them
            jp.kill()
            done = set()
            if isinstance(jp, BatchProcess):
                try:  # what a batch finished before the end is kept
                    jp.close()
                    for job, outcome, made in jp.harvest():
                        record(job, outcome, made, str(made))
                        done.add(job["key"])
                except Exception:  # never mask the reason we are leaving
                    pass
            unfinished += [j["key"] for j in batch if j["key"] not in done]
            shutil.rmtree(jp.run_dir, ignore_errors=True)
        try:
            store.mark_interrupted(unfinished)
        except Exception:  # never mask the reason we are leaving
            pass
        stats.left = sum(map(len, pending)) + len(unfinished)
    return stats


def campaign_id_of(out: Path) -> str:
    return hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]


LOCK_NAME = "campaign.lock"


def lock_out(out: Path):
    """Hold OUT's campaign lock (one campaign process per folder); a usage error where another holds it."""
    import fcntl
    fh = open(out / LOCK_NAME, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        fh.close()
        raise click.UsageError(f"{out}: another campaign process is running on this folder") from e
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    return fh


def campaign_running(out: Path) -> bool:
    """Whether a campaign process holds OUT's lock now (the lock dies with its process, kill -9 included)."""
    import fcntl
    p = Path(out) / LOCK_NAME
    if not p.is_file():
        return False
    with open(p, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def shown_status(status: str | None, active: bool) -> str:
    """A job's status as listed: a job stored as running whose campaign process is gone was interrupted
    (the next run of the campaign runs it again)."""
    if status is None:
        return "pending"
    return "interrupted" if status == "running" and not active else status


def run_campaign(spec: Spec, out: Path, *, as_json: bool = False, retry_failed: bool = False) -> dict:
    """Run (or resume) every job of `spec` not yet finished in OUT's store; returns the summary."""
    from eqsat_test.runners.campaign.store import STORE_NAME, Store
    if spec.executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError as e:
            raise click.UsageError("--executor ray needs Ray, which is not installed: "
                                   "pip install 'eqsat-test[ray]'") from e
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    lock = lock_out(out)
    cid = campaign_id_of(out)
    # Processes of an earlier run of this campaign that outlived it (kill -9): we hold the lock, so
    # anything still marked with this campaign is an orphan.
    orphans = kill_marked(f"EQSAT_CAMPAIGN={cid}")
    shutil.rmtree(out / RUNS_DIR / TMP_DIR, ignore_errors=True)
    store = Store(out / STORE_NAME)
    try:
        store.set_meta(name=spec.name, spec=str(spec.path), out=str(out))
        try:
            shutil.copy(spec.path, out / "spec.toml")
        except shutil.SameFileError:
            pass
        store.mark_interrupted()  # jobs an earlier, killed run left as running
        if retry_failed:
            store.retry_failed()
        jobs = make_jobs(spec)
        store.set_plan(jobs)  # the planned jobs: what is left is visible even if the budget stops us early
        done = store.finished_keys()
        todo = [j for j in jobs if j["key"] not in done]
        if orphans:
            click.echo(f"eqsat-test: killed {orphans} leftover process(es) of an earlier run of this campaign", err=True)
        if "cuda" in spec.devices and spec.executor == "local" and _count_gpus() == 0:
            raise click.UsageError("campaign spec asks for device cuda, but this machine has no NVIDIA GPU")
        plan = None
        if spec.executor == "local":
            n_cuda = sum(1 for j in todo if j["device"] == "cuda")
            plan = plan_slots(spec.jobs or cpu_cores(), cpu_cores(), len(todo) - n_cuda, n_cuda, gpu_ids(),
                              gpu_free_memory() if n_cuda else None)
        how = (f"{plan.at_once} at once, --jobs {plan.per_job} each" +
               (f"; cuda jobs: at most {plan.gpu_caps} per GPU, --jobs {plan.workers('cuda')} each"
                if plan.gpu_caps else "") if plan else spec.executor)
        click.echo(f"eqsat-test: campaign {spec.name}: {len(jobs)} jobs, {len(jobs) - len(todo)} already done, "
                   f"{len(todo)} to run ({spec.executor}: {how}); store {out / STORE_NAME}", err=True)
        if spec.executor == "local" and todo:
            warm_rule_cache(todo)
        progress = Progress(len(todo), store.counts(), plain=as_json)
        deadline = time.monotonic() + spec.total_seconds if spec.total_seconds else None
        t0, started = time.monotonic(), time.time()
        sampler = GpuSampler().start() if "cuda" in spec.devices and spec.executor == "local" and todo else None
        gpu_util = None
        try:
            if spec.executor == "ray":
                from eqsat_test.runners.campaign.raypool import run_ray
                stats = run_ray(todo, store, out, spec.address, spec.jobs, cid, progress, deadline)
            else:
                stats = run_local(todo, store, out, plan, cid, progress, deadline)
        finally:
            progress.close()
            if sampler is not None:
                gpu_util = sampler.stop()
        summary = summarize(store, out, jobs)
        run = {"ran": stats.ran, "skipped": len(jobs) - len(todo), "left": stats.left,
               "budget_spent": stats.budget_spent, "wall_seconds": round(time.monotonic() - t0, 2),
               "executor": spec.executor, **(plan.as_dict() if plan else {"jobs_at_once": None, "jobs_per_run": 1}),
               "peak_at_once": stats.peak_at_once, "gpu_util": gpu_util}
        summary["run"] = run
        store.add_run({**run, "started": started, "gpu_util": _brief_util(gpu_util)})
        return summary
    finally:
        store.close()
        lock.close()


def _brief_util(u: dict | None) -> dict | None:
    return None if u is None else {k: v for k, v in u.items() if k != "series"}


UNJUDGED = ("timeout", "crash", "error", "bad-input")  # job statuses that end without verdicts
UNJUDGED_SHOWN = 6  # jobs named per status in the text summary


def summarize(store, out: Path, jobs: list[dict] | None = None) -> dict:
    counts = store.counts()
    keys = {j["key"] for j in jobs} if jobs is not None else None
    st = store.status_of(keys) if keys is not None else {j["key"]: j["status"] for j in store.jobs()}
    # jobs that ended without verdicts: a model's bug in one of them is in no table, so each is named
    unjudged = [{"model": Path(j["model"]).name, "device": j["device"], "backend": j["backend"], "status": j["status"],
                 "error": (j.get("error") or "").strip().splitlines()[0][:160] if j.get("error") else ""}
                for status in UNJUDGED for j in store.jobs(status) if keys is None or j["key"] in keys]
    by: dict[str, int] = {}
    for k in (keys or st):
        s = st.get(k, "pending")
        s = "pending" if s in ("running", "retry", "interrupted") else s
        by[s] = by.get(s, 0) + 1
    findings = [{"signature": f["signature"], "kind": f["kind"], "compiler_bug": bool(f["compiler_bug"]),
                 "backend": f["backend"], "device": f["device"], "rules": f["rules"], "count": f["count"],
                 "jobs": f["jobs"], "models": sorted({s["model"] for s in f["sightings"]}),
                 "repro": next((s["repro"] for s in f["sightings"] if s.get("repro")), None),
                 "detail": f["detail"]} for f in store.findings()]
    clusters, sightings = store.clusters(), store.cluster_sightings()
    seen = {c.key: [s for k in (c.key, *c.absorbed) for s in sightings.get(k) or []] for c in clusters}
    roots = [{**c.to_dict(), "jobs": len({s["job_key"] for s in seen[c.key]}),
              "models": sorted({s["model"] for s in seen[c.key]} | set(c.models))} for c in clusters]
    return {"campaign": store.meta().get("name"), "out": str(out), "store": str(store.path),
            "clusters": roots, "note_groups": [g.to_dict() for g in store.note_groups()],
            "jobs": {"total": len(keys) if keys is not None else len(st), **by}, "unjudged": unjudged,
            "plan": store.plan_status(),
            "compiler_bugs": counts["compiler_bugs"], "root_causes": len(clusters),
            "exposed_only_by_rewrites": sum(1 for c in clusters if not c.seed_fails), "findings": findings}


def text_summary(s: dict) -> str:
    from eqsat_test.runners.findings.clusters import Cluster, yield_line
    from eqsat_test.runners.findings.notes import NoteGroup
    from eqsat_test.runners.findings.table import root_cause_table

    j = s["jobs"]
    lines = [f"eqsat-test: campaign {s['campaign']}: {j['total']} jobs: " +
             ", ".join(f"{v} {k}" for k, v in j.items() if k != "total")]
    p = s.get("plan")
    if p and p.get("jobs"):
        lines.append(f"  planned: {p['jobs']} jobs over {p['models']} models; {p['finished']} finished, "
                     f"{p['left']} left; {p['models_done']} of {p['models']} models done")
    r = s.get("run")
    if r:
        how = ""
        if r.get("jobs_at_once"):
            how = (f" ({r['jobs_at_once']} at once, peak {r['peak_at_once']}, --jobs {r['jobs_per_run']} each"
                   + (f", GPU busy {r['gpu_util']['mean']:.0f}% on average" if r.get("gpu_util") else "") + ")")
        lines.append(f"  this run: {r['ran']} jobs in {r['wall_seconds']:.0f} s{how}, {r['skipped']} skipped (done before)"
                     + (f", {r['left']} not run (budget spent; run again to resume)" if r["budget_spent"] else ""))
    bugs = [f for f in s["findings"] if f["compiler_bug"]]
    roots = s.get("clusters") or []
    if bugs:
        lines.append(f"  FOUND {len(roots)} distinct root cause(s) ({yield_line([Cluster.from_dict(c) for c in roots])}) "
                     f"from {len(bugs)} distinct compiler-bug signature(s), {sum(f['count'] for f in bugs)} sightings")
    else:
        lines.append("  no compiler-bug candidates")
    lines += _unjudged_lines(s.get("unjudged") or [])
    lines.append(f"  store: {s['store']}   report: eqsat-test report {s['out']}")
    lines += root_cause_table([Cluster.from_dict(c) for c in roots],
                              [NoteGroup.from_dict(g) for g in s.get("note_groups") or []])
    return "\n".join(lines)


def _unjudged_lines(unjudged: list[dict]) -> list[str]:
    """One line per status of the jobs that ended without verdicts, naming (model, device) of the first few: what
    they would have found is in no table above."""
    lines = []
    for status in UNJUDGED:
        mine = [u for u in unjudged if u["status"] == status]
        if mine:
            named = ", ".join(f"{u['model']} {u['device']}" for u in mine[:UNJUDGED_SHOWN])
            more = f" (+{len(mine) - UNJUDGED_SHOWN} more)" if len(mine) > UNJUDGED_SHOWN else ""
            lines.append(f"  no verdicts from {len(mine)} {status} job(s), not judged: {named}{more}; first: "
                         f"{mine[0]['error'] or '(no message)'}")
    return lines


def resolve_out(spec_path: Path, out: Path | None) -> Path:
    return out if out is not None else spec_path.parent / f"{spec_path.stem}-out"


