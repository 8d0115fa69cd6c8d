"""Campaign jobs as Ray tasks (`--executor ray`): one task per job or per batch of programs (runners/campaign/batch.py), the model and rule files travelling with it, its run folder coming back as a tarball, each program recorded in the store as its task returns; what a batch left unfinished goes out again as new tasks."""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import click

from eqsat_test.runners.campaign.batch import ray_batch, untar
from eqsat_test.runners.campaign.jobs import finalize_run, ray_job
from eqsat_test.runners.campaign.progress import Progress, RunStats
from eqsat_test.runners.campaign.spec import RUNS_DIR, TMP_DIR
from eqsat_test.runners.protocol import past


def run_ray(jobs: list, store, out: Path, address: str | None, n_cpus: int | None, campaign_id: str,
            progress: Progress, deadline: float | None):
    """Every item of `jobs` (a job, or a batch: a list of jobs) as a Ray task; returns the RunStats."""
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
    one, many = ray.remote(ray_job), ray.remote(ray_batch)
    contents: dict[str, tuple[str, bytes]] = {}

    def shipped(path: str) -> dict:
        if path not in contents:
            b = Path(path).read_bytes()
            contents[path] = (hashlib.sha256(b).hexdigest(), b)
        sha, b = contents[path]
        return {"path": path, "sha": sha, "content": b}

    refs: dict = {}
    rule_refs: dict = {}  # one object per rule set, shared by its tasks

    def submit(batch: list[dict]) -> None:
        job = batch[0]
        rs = job["rule_set_version"]
        if rs not in rule_refs:
            rule_refs[rs] = ray.put([shipped(f) for f in job["rule_files"]] if job["rule_set"] else [])
        opts = {"num_cpus": 1, "num_gpus": 1 if job["device"] == "cuda" else 0, "max_retries": 0,
                "name": f"eqsat-job-{job['run_name']}" + (f"+{len(batch) - 1}" if len(batch) > 1 else "")}
        if len(batch) == 1:
            payload = {"job": job, "campaign_id": campaign_id, "threads": 1, "model": shipped(job["model"])}
            refs[one.options(**opts).remote(payload, rule_refs[rs])] = batch
        else:
            payload = {"jobs": batch, "campaign_id": campaign_id, "threads": 1,
                       "models": [shipped(j["model"]) for j in batch]}
            refs[many.options(**opts).remote(payload, rule_refs[rs])] = batch

    def record(job: dict, outcome: dict) -> None:
        store.record_job(job, outcome)
        stats.ran += 1
        progress.update(job, outcome, store.counts())

    try:
        for item in jobs:
            submit(item if isinstance(item, list) else [item])
        store.mark_running([j for b in refs.values() for j in b], host="ray")
        while refs:
            if past(deadline):
                stats.budget_spent = True
                break
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.5)
            progress.heartbeat([(job, None, None) for b in refs.values() for job in b])
            for ref in ready:
                batch = refs.pop(ref)
                tmp = out / RUNS_DIR / TMP_DIR / f"{batch[0]['key'][:12]}-{time.time_ns()}"
                try:
                    res = ray.get(ref)
                except Exception as e:  # the task itself failed (a lost node, an OOM kill): its jobs
                    why = f"Ray task failed: {type(e).__name__}: {e}"[:4000]
                    if len(batch) > 1:  # each program again on its own: which one it was is not known
                        for job in batch:
                            submit([job])
                        continue
                    outcome: dict = {"status": "crash", "exit_code": None, "started": time.time(),
                                     "finished": time.time(), "report": None, "error": why, "host": "ray",
                                     "rules": {}}
                    tmp.mkdir(parents=True, exist_ok=True)
                    record(batch[0], finalize_run(tmp, out / RUNS_DIR / batch[0]["run_name"], str(tmp), outcome))
                    continue
                untar(res["tar"], tmp)
                if len(batch) == 1:
                    record(batch[0], finalize_run(tmp, out / RUNS_DIR / batch[0]["run_name"], res["made_in"],
                                                  res["outcome"]))
                    continue
                by_key = {j["key"]: j for j in batch}
                for d in res["done"]:
                    job = by_key[d["key"]]
                    record(job, finalize_run(tmp / d["folder"], out / RUNS_DIR / job["run_name"],
                                             f"{res['made_in']}/{d['folder']}", d["outcome"]))
                for keys in res["left"]:
                    submit([by_key[k] for k in keys])
                shutil.rmtree(tmp, ignore_errors=True)
    except KeyboardInterrupt:
        stats.interrupted = True
        raise
    finally:
        for ref in refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        try:
            store.mark_interrupted([job["key"] for b in refs.values() for job in b])
        except Exception:
            pass
        stats.left = sum(map(len, refs.values()))
        if started_here:
            ray.shutdown()
    return stats
