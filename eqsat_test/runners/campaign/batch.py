"""Batches: several programs' campaign jobs judged by one `eqsat-test run P1.py P2.py ...` process (a hunt's jobs), each program still its own job in the store, with its own verdicts, log, run folder and time limit.

A process pays its start (the interpreter, torch and egglog imported, the rule library read, a worker warmed) once for
the whole batch (runners/cli/many.py). The run says on stderr where each program starts and how it ended
(runners/protocol.py: MODEL_LINE), so a BatchProcess knows which program runs, gives each its own job timeout from
its own start, and hands over each finished program (its folder RUN_DIR/<name>, its part of the log, its exit code)
as soon as the next one starts. When the process dies before the end (a crash, a timeout, a deadline), what finished
is kept, and what did not finish is given back as new batches: the program that was running alone (so that a crash
is said of it, and of it only), the ones that had not started as one batch; none of a batch that judged nothing
shares a process again.
"""
from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path

from eqsat_test.runners.campaign.jobs import (
    JobProcess,
    job_env,
    kill_marked,
    materialize,
    ray_rule_args,
    run_outcome,
)
from eqsat_test.runners.protocol import MODEL_LINE

LOG_TAIL = 4000  # bytes of a program's log kept in its job's error


def signature(job: dict) -> tuple:
    """What a job's `eqsat-test run` command holds besides its model: jobs of one signature may share a process."""
    return (job["device"], job["backend"], job["variants"], job["seed"], job["inputs"], tuple(job["run_args"]),
            tuple(job["rule_args"]), float(job["timeout"]), float(job["variant_timeout"]))


class Batcher:
    """Jobs in, batches out: up to `k` jobs of one signature each, in the order they came, no two of one model name
    (their folders would be one). A batch not yet full goes out once `patience` jobs came after its first, so that a
    rare signature (the programs with sweeps, those compiled with dynamic=True) does not wait for ever."""

    def __init__(self, k: int, patience: int | None = None) -> None:
        self.k = max(1, k)
        self.patience = 2 * self.k if patience is None else patience
        self.open: dict[tuple, tuple[int, list[dict]]] = {}  # signature -> (jobs seen when it opened, its jobs)
        self.seen = 0

    def add(self, job: dict) -> list[list[dict]]:
        """Take one job; the batches now ready."""
        sig = signature(job)
        ready = []
        opened, jobs = self.open.get(sig, (self.seen, []))
        if any(Path(j["model"]).stem == Path(job["model"]).stem for j in jobs):
            ready.append(jobs)
            opened, jobs = self.seen, []
        jobs.append(job)
        self.seen += 1
        self.open[sig] = (opened, jobs)
        for s, (first, js) in list(self.open.items()):
            if len(js) >= self.k or self.seen - first > self.patience:
                ready.append(js)
                del self.open[s]
        return ready

    def flush(self) -> list[list[dict]]:
        """Every batch not yet full, oldest first."""
        out = [js for _, js in sorted(self.open.values(), key=lambda v: v[0])]
        self.open.clear()
        return out

    def waiting(self) -> list[dict]:
        return [j for _, js in self.open.values() for j in js]


def group_jobs(jobs: list[dict], k: int) -> list[list[dict]]:
    """`jobs` in batches of up to `k` (one signature, distinct model names each), in their order."""
    b = Batcher(k, patience=len(jobs) + 1)
    out = [batch for j in jobs for batch in b.add(j)]
    return out + b.flush()


class BatchProcess(JobProcess):
    """The programs of one batch in one `eqsat-test run ... --out RUN_DIR` under its supervisor: each program's
    output in RUN_DIR/<its name>, its part of RUN_DIR/job.log, and its own job timeout from its own start."""

    def __init__(self, jobs: list[dict], run_dir: Path, env: dict, cwd: Path | None = None,
                 models: list[str] | None = None, rule_args: list[str] | None = None, workers: int = 1) -> None:
        self.jobs = list(jobs)
        self.models = list(models or [j["model"] for j in jobs])
        self.dirs = [run_dir / Path(m).stem for m in self.models]
        self.begun: dict[int, tuple[float, float, int]] = {}  # program -> (time.time(), monotonic, log offset)
        self.ended: dict[int, tuple[float, int, int]] = {}  # program -> (time.time(), exit code, log offset after)
        self.taken: set[int] = set()
        self.timed_out_at: int | None = None
        self.stop_at: int | None = None  # the program after which the batch stops (a deadline passed)
        self._pos, self._partial = 0, b""
        super().__init__(jobs[0], run_dir, env, cwd=cwd, rule_args=rule_args, jobs=workers, models=self.models)
        self.begun[0] = (self.started, time.monotonic(), 0)  # the first program's clock: the process's start

    # -- the log --------------------------------------------------------------------------------------------------

    def _read_log(self) -> None:
        try:
            with open(self.run_dir / "job.log", "rb") as fh:
                fh.seek(self._pos)
                data = fh.read()
        except OSError:
            return
        base = self._pos - len(self._partial)
        self._pos += len(data)
        buf = self._partial + data
        lines = buf.split(b"\n")
        self._partial = lines.pop()
        at = base
        for raw in lines:
            m = MODEL_LINE.match(raw.decode(errors="replace"))
            if m is not None and int(m.group(2)) == len(self.jobs) and 1 <= int(m.group(1)) <= len(self.jobs):
                i = int(m.group(1)) - 1
                if m.group(3) is not None:
                    self.ended.setdefault(i, (time.time(), int(m.group(3)), at + len(raw) + 1))
                elif i > 0:
                    self.begun.setdefault(i, (time.time(), time.monotonic(), at))
            at += len(raw) + 1

    def current(self) -> int | None:
        """The program running now (begun, not ended); None between programs or after the last."""
        live = [i for i in self.begun if i not in self.ended]
        return max(live) if live else None

    def running(self) -> tuple[dict, float]:
        """The job of the program running now (else the batch's first) and its start (time.time())."""
        i = self.current()
        i = 0 if i is None else i
        return self.jobs[i], self.begun[i][0]

    # -- the process ----------------------------------------------------------------------------------------------

    def stop_after_current(self) -> None:
        """Start no more programs: the batch ends when the one running now has ended."""
        if self.stop_at is None:
            cur = self.current()
            self.stop_at = cur if cur is not None else max(self.ended, default=-1)

    def poll(self) -> bool:
        self._read_log()
        if self.proc.poll() is not None:
            self._read_log()
            return True
        cur = self.current()
        if self.stop_at is not None and (self.stop_at in self.ended or self.stop_at < 0):
            self.kill()
            return True
        if cur is not None and time.monotonic() > self.begun[cur][1] + float(self.jobs[cur]["timeout"]):
            self.timed_out_at = cur
            self.kill()
            return True
        return False

    def close(self) -> None:
        """After the end: the files closed, stragglers (the inner worker) killed."""
        self._out.close()
        self._err.close()
        kill_marked(f"EQSAT_JOB={self.token}")

    # -- the programs ---------------------------------------------------------------------------------------------

    def _segment(self, i: int, end: int | None) -> str:
        start = 0 if i == 0 else self.begun[i][2]
        try:
            with open(self.run_dir / "job.log", "rb") as fh:
                fh.seek(start)
                data = fh.read(-1 if end is None else max(0, end - start))
        except OSError:
            data = b""
        return data.decode(errors="replace")

    def _take(self, i: int, rc: int | None, timed_out: bool, end: int | None) -> tuple[dict, dict, Path]:
        self.taken.add(i)
        d = self.dirs[i]
        d.mkdir(parents=True, exist_ok=True)
        log = self._segment(i, end)
        (d / "job.log").write_text(log)
        outcome = run_outcome(self.jobs[i], d, rc, timed_out, self.begun[i][0], lambda: log[-LOG_TAIL:])
        if i in self.ended:
            outcome["finished"] = self.ended[i][0]
        return self.jobs[i], outcome, d

    def harvest(self) -> list[tuple[dict, dict, Path]]:
        """The programs ended since the last call: (job, outcome, its folder); after the end, also the program killed
        at its timeout."""
        got = [self._take(i, code, False, end) for i, (_, code, end) in sorted(self.ended.items())
               if i not in self.taken]
        i = self.timed_out_at
        if i is not None and i not in self.taken and self.proc.poll() is not None:
            got.append(self._take(i, self.proc.returncode, True, None))
        return got

    def leftovers(self) -> list[list[dict]]:
        """After the end: the programs that did not finish, as batches to run again."""
        rest = [i for i in range(len(self.jobs)) if i not in self.taken]
        if not rest:
            return []
        if self.stop_at is not None:  # stopped on purpose: nothing to tell apart
            return [[self.jobs[i] for i in rest]]
        culprit = [i for i in rest if i in self.begun and i not in self.ended]
        fresh = [i for i in rest if i not in culprit]
        out = [[self.jobs[i]] for i in culprit]
        if fresh and (culprit or self.taken):
            out.append([self.jobs[i] for i in fresh])
        else:
            out += [[self.jobs[i]] for i in fresh]
        return out


# ---------------------------------------------------------------------------------------------
# Ray: a batch as one task; its programs' files travel with it, the run folder comes back as a tarball
# ---------------------------------------------------------------------------------------------

def ray_batch(payload: dict, rule_files: list[dict] | None = None) -> dict:
    """Runs on a Ray worker: one batch in a subprocess, then the run folder as tar.gz, each finished program's
    outcome (by job key, with its folder's name) and the leftovers (lists of job keys)."""
    jobs = payload["jobs"]
    work = Path(tempfile.mkdtemp(prefix="eqsat-batch-"))
    try:
        models = [materialize(m["path"], m["sha"], m["content"], work / "model") for m in payload["models"]]
        rule_args = ray_rule_args(jobs[0], rule_files if rule_files is not None else [], work)
        cache = Path(tempfile.gettempdir()) / "eqsat-ray-cache" / f"worker{os.getpid()}"
        token = f"{jobs[0]['key'][:16]}-{os.getpid()}-{time.time_ns()}"
        env = job_env(token, payload["campaign_id"], cache, payload.get("threads", 1), jobs[0]["device"])
        run_dir = work / "run"
        bp = BatchProcess(jobs, run_dir, env, cwd=work, models=models, rule_args=rule_args)
        while not bp.poll():
            time.sleep(0.2)
        bp.close()
        done = [{"key": j["key"], "outcome": o, "folder": d.name} for j, o, d in bp.harvest()]
        left = [[j["key"] for j in b] for b in bp.leftovers()]
        for d in run_dir.glob("*/scratch"):
            shutil.rmtree(d, ignore_errors=True)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(str(run_dir), arcname=".")
        return {"done": done, "left": left, "tar": buf.getvalue(), "made_in": str(run_dir)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def untar(blob: bytes, where: Path) -> None:
    """A run folder that came back from a Ray task, unpacked into `where`."""
    where.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        try:
            tar.extractall(str(where), filter="data")
        except TypeError:  # Python without extraction filters (< 3.10.12)
            tar.extractall(str(where))
