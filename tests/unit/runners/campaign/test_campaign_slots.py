"""Unit tests of the local campaign executor's slots (runners/campaign/run.py): how many jobs at once,
how many workers each, how many cuda jobs per GPU (bounded by free GPU memory), the GPU utilisation
sampler, and the scheduling of cuda jobs onto GPUs, with fake core counts, GPUs and job processes."""
from __future__ import annotations

import os
import time
from pathlib import Path

from eqsat_test.runners.campaign import run as camprun
from eqsat_test.runners.campaign.run import GIB, GpuSampler, SlotPlan, plan_slots


def test_cuda_jobs_run_several_per_gpu_and_share_the_cores():
    # The host: 16 cores, one GPU with 70 GiB free, 24 cuda jobs, -j 12: 12 at once, not 1.
    p = plan_slots(12, 16, n_cpu_jobs=0, n_cuda_jobs=24, gpus=["0"], gpu_free=[70 * GIB])
    assert (p.at_once, p.per_job, p.gpu_caps) == (12, 1, [12])
    # default -j (one per core): 16 at once, one worker each
    p = plan_slots(16, 16, 0, 24, ["0"], [70 * GIB])
    assert (p.at_once, p.per_job, p.threads) == (16, 1, 1)
    # little free memory: one GPU process per 4 GiB: two cuda jobs of one worker each
    p = plan_slots(16, 16, 0, 24, ["0"], [10 * GIB])
    assert (p.at_once, p.gpu_caps, p.workers("cuda")) == (2, [2], 1)
    # few cuda jobs, much memory: each gets several workers (jobs x workers ~ cores, within the memory)
    p = plan_slots(16, 16, 0, 2, ["0"], [70 * GIB])
    assert (p.at_once, p.workers("cuda")) == (2, 8)
    assert plan_slots(16, 16, 0, 2, ["0"], [20 * GIB]).workers("cuda") == 2  # 5 GPU processes for 2 jobs
    # almost none: still one
    assert plan_slots(16, 16, 0, 24, ["0"], [GIB // 2]).gpu_caps == [1]
    # two GPUs of 8 GiB free: two jobs on each
    p = plan_slots(16, 16, 0, 24, ["0", "1"], [8 * GIB, 8 * GIB])
    assert (p.at_once, p.gpu_caps, p.workers("cuda")) == (4, [2, 2], 1)
    # memory unknown (torch cannot tell): bounded by -j / cores only
    p = plan_slots(16, 16, 0, 24, ["0"], None)
    assert (p.at_once, p.gpu_caps, p.workers("cuda")) == (16, [16], 1)
    # cpu jobs fill what cuda jobs cannot use
    p = plan_slots(16, 16, n_cpu_jobs=4, n_cuda_jobs=24, gpus=["0"], gpu_free=[8 * GIB])
    assert (p.at_once, p.workers("cpu"), p.workers("cuda")) == (6, 2, 1)
    # fewer jobs than cores: each job gets more workers
    p = plan_slots(16, 16, 3, 0, [], None)
    assert (p.at_once, p.per_job, p.gpu_caps) == (3, 5, [])
    assert plan_slots(2, 2, 10, 0, [], None).as_dict()["jobs_at_once"] == 2


def test_gpu_sampler_reads_nvidia_smi_every_interval(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 37\necho 81\n")  # two GPUs
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    s = GpuSampler(interval=0.05).start()
    time.sleep(0.6)
    u = s.stop()
    assert u is not None and u["samples"] >= 3 and u["per_gpu_mean"] == [37.0, 81.0] and u["max"] == 81.0
    assert u["mean"] == 59.0 and u["series"][0][1] == [37.0, 81.0]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no nvidia-smi: null, not an error
    assert GpuSampler(interval=0.05).start().stop() is None


class _FakeStore:
    def __init__(self):
        self.recorded, self.interrupted = [], []

    def mark_running(self, job, host=None):
        pass

    def record_job(self, job, outcome):
        self.recorded.append(job["key"])

    def counts(self):
        return {"jobs": {}, "findings": 0, "compiler_bugs": 0}

    def mark_interrupted(self, keys=None):
        self.interrupted += list(keys or [])


def test_local_executor_puts_cuda_jobs_on_gpus_up_to_their_slots(tmp_path, monkeypatch):
    """With a fake job process: 6 cuda jobs and 2 cpu jobs, 2 GPUs with 2 slots each, 5 jobs at once."""
    live: list = []
    seen: list[tuple] = []
    peak = {"all": 0, "gpu": {}}

    class FakeJob:
        def __init__(self, job, run_dir, env, jobs=1, **kw):
            self.job, self.run_dir, self.polls, self.started = job, Path(run_dir), 0, 0.0
            self.gpu = env.get("CUDA_VISIBLE_DEVICES") if job["device"] == "cuda" else None
            seen.append((job["device"], self.gpu, jobs, env["OMP_NUM_THREADS"]))
            live.append(self)
            peak["all"] = max(peak["all"], len(live))
            on = sum(1 for j in live if j.gpu == self.gpu) if self.gpu else 0
            peak["gpu"][self.gpu] = max(peak["gpu"].get(self.gpu, 0), on)

        def poll(self):
            self.polls += 1
            if self.polls >= 3:
                if self in live:
                    live.remove(self)
                return True
            return False

        def outcome(self):
            return {"status": "done", "started": 0.0, "finished": 1.0}

        def kill(self):
            pass

    monkeypatch.setattr(camprun, "JobProcess", FakeJob)
    monkeypatch.setattr(camprun, "finalize_run", lambda tmp, final, made_in, outcome: outcome)
    monkeypatch.setattr(camprun.time, "sleep", lambda s: None)
    jobs = [{"key": f"c{i}", "device": "cuda", "run_name": f"c{i}"} for i in range(6)] + \
           [{"key": f"p{i}", "device": "cpu", "run_name": f"p{i}"} for i in range(2)]
    plan = SlotPlan(at_once=5, per_job=3, threads=1, gpu_ids=["3", "5"], gpu_caps=[2, 2], per_cuda_job=2)
    store = _FakeStore()

    class P:
        def update(self, *a):
            pass

        def heartbeat(self, *a):
            pass

    stats = camprun.run_local(jobs, store, tmp_path, plan, "cid", P(), None)
    assert stats.ran == 8 and sorted(store.recorded) == sorted(j["key"] for j in jobs)
    assert stats.peak_at_once == 5 == peak["all"]
    assert {g for d, g, _, _ in seen if d == "cuda"} == {"3", "5"}  # CUDA_VISIBLE_DEVICES: the GPU's id
    assert peak["gpu"]["3"] <= 2 and peak["gpu"]["5"] <= 2
    assert {k for d, _, k, _ in seen if d == "cpu"} == {3} and {k for d, _, k, _ in seen if d == "cuda"} == {2}
    assert all(g is None for d, g, _, _ in seen if d == "cpu")
