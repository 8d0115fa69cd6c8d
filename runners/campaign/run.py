"""Campaigns: models x rule sets x backends x devices x seeds, one isolated `eqsat-test run` per job.

A job runs in its own subprocess with a timeout (a crash or hang costs one job), on a local pool
(one job per core) or as Ray tasks; every outcome goes into the campaign's SQLite store
(runners/campaign/store.py) in one transaction, so a campaign killed at any moment resumes where it stopped.
Imports nothing heavy at module level: torch, egglog and ray stay out of `eqsat-test --help`.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import click

from runners.campaign.jobs import JobProcess, finalize_run, job_env, kill_marked, make_jobs, ray_job
from runners.campaign.spec import RUNS_DIR, TMP_DIR, Spec

# ---------------------------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------------------------

class Progress:
    """A tqdm bar on a terminal; plain lines on stderr otherwise (or with --json)."""

    def __init__(self, total: int, counts: dict, plain: bool) -> None:
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self.bar = None
        if not plain and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="job", file=sys.stderr, dynamic_ncols=True)
                self.bar.set_postfix_str(self._postfix(counts))
            except ImportError:
                self.bar = None

    @staticmethod
    def _postfix(counts: dict) -> str:
        return f"bugs={counts['compiler_bugs']} notes={counts['findings'] - counts['compiler_bugs']}"

    def update(self, job: dict, outcome: dict, counts: dict) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(self._postfix(counts))
            self.bar.update(1)
            return
        el = time.monotonic() - self.t0
        rate = self.done / el * 60 if el > 0 else 0.0
        left = (self.total - self.done) / (self.done / el) if self.done and el > 0 else 0.0
        n = len((outcome.get("report") or {}).get("findings") or [])
        click.echo(f"eqsat-test: [{self.done}/{self.total}] {outcome['status']:<9} {job['model_rel']} "
                   f"rules={job['rule_label']} {job['backend']}/{job['device']} seed={job['seed']} "
                   f"{outcome['finished'] - outcome['started']:.1f} s, {n} finding(s) | distinct so far: "
                   f"{self._postfix(counts)}, {rate:.1f} jobs/min, ~{_fmt_s(left)} left", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _fmt_s(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# ---------------------------------------------------------------------------------------------
# Running a campaign
# ---------------------------------------------------------------------------------------------

@dataclass
class RunStats:
    ran: int = 0
    skipped: int = 0
    left: int = 0
    budget_spent: bool = False
    interrupted: bool = False


def _count_gpus() -> int:
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        return len([d for d in vis.split(",") if d.strip() and d.strip() != "-1"])
    return len([d for d in os.listdir("/dev") if d.startswith("nvidia") and d[6:].isdigit()]) if os.path.isdir("/dev") else 0


def run_local(jobs: list[dict], store, out: Path, n_workers: int, campaign_id: str, progress: Progress,
              deadline: float | None) -> RunStats:
    """The local pool: at most `n_workers` jobs at once, each a subprocess with its timeout."""
    stats = RunStats()
    tmp_root = out / RUNS_DIR / TMP_DIR
    threads = max(1, (os.cpu_count() or 1) // max(1, n_workers))
    gpu_slots = max(1, _count_gpus())
    pending = list(jobs)
    running: dict[int, tuple[dict, JobProcess]] = {}
    free = list(range(n_workers))
    try:
        while pending or running:
            if deadline is not None and time.monotonic() > deadline:
                stats.budget_spent = True
                break
            while free and pending:
                gpus_busy = sum(1 for j, _ in running.values() if j["device"] == "cuda")
                k = next((i for i, j in enumerate(pending) if j["device"] != "cuda" or gpus_busy < gpu_slots), None)
                if k is None:
                    break
                job = pending.pop(k)
                slot = free.pop(0)
                token = f"{job['key'][:16]}-{os.getpid()}-{time.time_ns()}"
                tmp = tmp_root / f"{job['key'][:12]}-{time.time_ns()}"
                env = job_env(token, campaign_id, out / "cache" / f"worker{slot}", threads)
                store.mark_running(job)
                running[slot] = (job, JobProcess(job, tmp, env))
            for slot in list(running):
                job, jp = running[slot]
                if not jp.poll():
                    continue
                del running[slot]
                free.append(slot)
                outcome = jp.outcome()
                outcome = finalize_run(jp.run_dir, out / RUNS_DIR / job["run_name"], str(jp.run_dir), outcome)
                store.record_job(job, outcome)
                stats.ran += 1
                progress.update(job, outcome, store.counts())
            time.sleep(0.1)
    except KeyboardInterrupt:
        stats.interrupted = True
        raise
    finally:
        for job, jp in running.values():  # unfinished: not recorded, the next resume runs them
            jp.kill()
            shutil.rmtree(jp.run_dir, ignore_errors=True)
        stats.left = len(pending) + len(running)
    return stats


def run_ray(jobs: list[dict], store, out: Path, address: str | None, n_cpus: int | None, campaign_id: str,
            progress: Progress, deadline: float | None) -> RunStats:
    try:
        import ray
    except ImportError as e:
        raise click.UsageError("--executor ray needs Ray, which is not installed: "
                               "pip install 'eqsat-test[ray]'") from e
    stats = RunStats()
    started_here = False
    if not ray.is_initialized():  # (a test or a notebook may have connected already)
        if address in (None, ""):  # RAY_ADDRESS if set, else a new local cluster
            ray.init(num_cpus=n_cpus if not os.environ.get("RAY_ADDRESS") else None, include_dashboard=False,
                     log_to_driver=False)
        elif address == "local":
            ray.init(address="local", num_cpus=n_cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
        started_here = True
    remote = ray.remote(ray_job)
    contents: dict[str, tuple[str, bytes]] = {}

    def shipped(path: str) -> dict:
        if path not in contents:
            b = Path(path).read_bytes()
            contents[path] = (hashlib.sha256(b).hexdigest(), b)
        sha, b = contents[path]
        return {"path": path, "sha": sha, "content": b}

    refs: dict = {}
    rule_refs: dict = {}  # one object per rule set, shared by its tasks
    try:
        for job in jobs:
            rs = job["rule_set_version"]
            if rs not in rule_refs:
                rule_refs[rs] = ray.put([shipped(f) for f in job["rule_files"]] if job["rule_set"] else [])
            payload = {"job": job, "campaign_id": campaign_id, "threads": 1, "model": shipped(job["model"])}
            ref = remote.options(num_cpus=1, num_gpus=1 if job["device"] == "cuda" else 0, max_retries=0,
                                 name=f"eqsat-job-{job['run_name']}").remote(payload, rule_refs[rs])
            refs[ref] = job
        store.mark_running(list(refs.values()), host="ray")
        while refs:
            if deadline is not None and time.monotonic() > deadline:
                stats.budget_spent = True
                break
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.5)
            for ref in ready:
                job = refs.pop(ref)
                try:
                    res = ray.get(ref)
                except Exception as e:  # the task itself failed (a lost node, an OOM kill): one job
                    outcome = {"status": "crash", "exit_code": None, "started": time.time(), "finished": time.time(),
                               "report": None, "error": f"Ray task failed: {type(e).__name__}: {e}"[:4000],
                               "host": "ray", "rules": {}}
                    tmp = out / RUNS_DIR / TMP_DIR / f"{job['key'][:12]}-{time.time_ns()}"
                    tmp.mkdir(parents=True, exist_ok=True)
                    outcome = finalize_run(tmp, out / RUNS_DIR / job["run_name"], str(tmp), outcome)
                else:
                    tmp = out / RUNS_DIR / TMP_DIR / f"{job['key'][:12]}-{time.time_ns()}"
                    tmp.mkdir(parents=True, exist_ok=True)
                    with tarfile.open(fileobj=io.BytesIO(res["tar"]), mode="r:gz") as tar:
                        try:
                            tar.extractall(str(tmp), filter="data")
                        except TypeError:  # Python without extraction filters (< 3.10.12)
                            tar.extractall(str(tmp))
                    outcome = finalize_run(tmp, out / RUNS_DIR / job["run_name"], res["made_in"], res["outcome"])
                store.record_job(job, outcome)
                stats.ran += 1
                progress.update(job, outcome, store.counts())
    except KeyboardInterrupt:
        stats.interrupted = True
        raise
    finally:
        for ref in refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        stats.left = len(refs)
        if started_here:
            ray.shutdown()
    return stats


def campaign_id_of(out: Path) -> str:
    return hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]


def _lock(out: Path):
    import fcntl
    fh = open(out / "campaign.lock", "w")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        fh.close()
        raise click.UsageError(f"{out}: another campaign process is running on this folder") from e
    fh.write(str(os.getpid()))
    fh.flush()
    return fh


def run_campaign(spec: Spec, out: Path, *, as_json: bool = False, retry_failed: bool = False) -> dict:
    """Run (or resume) every job of `spec` not yet finished in OUT's store; returns the summary."""
    from runners.campaign.store import Store, STORE_NAME
    if spec.executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError as e:
            raise click.UsageError("--executor ray needs Ray, which is not installed: "
                                   "pip install 'eqsat-test[ray]'") from e
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    lock = _lock(out)
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
        if retry_failed:
            store.retry_failed()
        jobs = make_jobs(spec)
        done = store.finished_keys()
        todo = [j for j in jobs if j["key"] not in done]
        if orphans:
            click.echo(f"eqsat-test: killed {orphans} leftover process(es) of an earlier run of this campaign", err=True)
        click.echo(f"eqsat-test: campaign {spec.name}: {len(jobs)} jobs, {len(jobs) - len(todo)} already done, "
                   f"{len(todo)} to run ({spec.executor}); store {out / STORE_NAME}", err=True)
        if "cuda" in spec.devices and spec.executor == "local" and _count_gpus() == 0:
            raise click.UsageError("campaign spec asks for device cuda, but this machine has no NVIDIA GPU")
        progress = Progress(len(todo), store.counts(), plain=as_json)
        deadline = time.monotonic() + spec.total_seconds if spec.total_seconds else None
        t0 = time.monotonic()
        try:
            if spec.executor == "ray":
                stats = run_ray(todo, store, out, spec.address, spec.jobs, cid, progress, deadline)
            else:
                n = spec.jobs or max(1, os.cpu_count() or 1)
                stats = run_local(todo, store, out, n, cid, progress, deadline)
        finally:
            progress.close()
        summary = summarize(store, out, jobs)
        summary["run"] = {"ran": stats.ran, "skipped": len(jobs) - len(todo), "left": stats.left,
                          "budget_spent": stats.budget_spent, "wall_seconds": round(time.monotonic() - t0, 2)}
        return summary
    finally:
        store.close()
        lock.close()


def summarize(store, out: Path, jobs: list[dict] | None = None) -> dict:
    counts = store.counts()
    keys = {j["key"] for j in jobs} if jobs is not None else None
    st = store.status_of(keys) if keys is not None else {j["key"]: j["status"] for j in store.jobs()}
    by: dict[str, int] = {}
    for k in (keys or st):
        s = st.get(k, "pending")
        s = "pending" if s in ("running", "retry") else s
        by[s] = by.get(s, 0) + 1
    findings = [{"signature": f["signature"], "kind": f["kind"], "compiler_bug": bool(f["compiler_bug"]),
                 "backend": f["backend"], "device": f["device"], "rules": f["rules"], "count": f["count"],
                 "jobs": f["jobs"], "models": sorted({s["model"] for s in f["sightings"]}),
                 "repro": next((s["repro"] for s in f["sightings"] if s.get("repro")), None),
                 "detail": f["detail"]} for f in store.findings()]
    return {"campaign": store.meta().get("name"), "out": str(out), "store": str(store.path),
            "jobs": {"total": len(keys) if keys is not None else len(st), **by},
            "compiler_bugs": counts["compiler_bugs"], "findings": findings}


def _text_summary(s: dict) -> str:
    from runners.findings.write import notes_line

    j = s["jobs"]
    lines = [f"eqsat-test: campaign {s['campaign']}: {j['total']} jobs: " +
             ", ".join(f"{v} {k}" for k, v in j.items() if k != "total")]
    r = s.get("run")
    if r:
        lines.append(f"  this run: {r['ran']} jobs in {r['wall_seconds']:.0f} s, {r['skipped']} skipped (done before)"
                     + (f", {r['left']} not run (budget spent; run again to resume)" if r["budget_spent"] else ""))
    bugs = [f for f in s["findings"] if f["compiler_bug"]]
    notes = [f for f in s["findings"] if not f["compiler_bug"]]
    if bugs:
        lines.append(f"  FOUND {len(bugs)} distinct compiler-bug candidate(s):")
        for f in bugs[:30]:
            lines.append(f"    [{f['kind']}] {f['signature']} {f['backend']}/{f['device']} x{f['count']} in "
                         f"{f['jobs']} job(s), models: {', '.join(Path(m).name for m in f['models'][:4])}"
                         f"{' ...' if len(f['models']) > 4 else ''}")
            if f["repro"]:
                lines.append(f"      repro: {f['repro']}")
    else:
        lines.append("  no compiler-bug candidates")
    if notes:
        lines.append(notes_line(notes))
    lines.append(f"  store: {s['store']}   report: eqsat-test report {s['out']}")
    return "\n".join(lines)


def _resolve_out(spec_path: Path, out: Path | None) -> Path:
    return out if out is not None else spec_path.parent / f"{spec_path.stem}-out"


