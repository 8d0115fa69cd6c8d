"""Campaign jobs: one `eqsat-test run` per (model, rule set, backend, device, seed), as a killable process tree or a Ray task."""
from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

from eqsat_test.lowering.manifest import manifest_or_none
from eqsat_test.rewrite.rulecache import CACHE_VERSION, cache_dir  # (torch-free)
from eqsat_test.rewrite.rulefiles import rule_files
from eqsat_test.runners import REPO_ROOT
from eqsat_test.runners.campaign.spec import Spec, resolve_rule_spec
from eqsat_test.runners.campaign.supervise import processes_with_env  # noqa: F401  (re-exported: tests, run.py)

# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------

def _sha_file(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def torch_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("torch")
    except PackageNotFoundError:
        return "unknown"


def make_jobs(spec: Spec) -> list[dict]:
    """Every (model, rule set, backend, device, seed) of the spec, with its store key."""
    base = spec.path.parent
    tv = torch_version()
    model_sha = {m: _sha_file(m) for m in spec.models}
    rsets = []
    for rs in spec.rule_sets:
        args, files = [], []
        for item in rs:
            a, fs = resolve_rule_spec(item, base)
            args.append(a)
            files.extend(fs)
        if not rs:
            files = [f.resolve() for f in rule_files("default")]
        h = hashlib.sha256()
        for f in sorted(set(files)):
            h.update(f"{f.name}:{_sha_file(f)}\n".encode())
        rsets.append({"spec": rs, "args": args, "files": [str(f) for f in sorted(set(files))],
                      "version": h.hexdigest()[:16], "label": "+".join(rs) if rs else "default"})
    options = {"variants": spec.variants, "inputs": spec.inputs, "run_args": spec.run_args}
    jobs = []
    # each model's devices next to each other: a cpu + cuda campaign keeps the GPU busy from its first
    # jobs (model-major, all cpu jobs came first and the GPU idled for the first 35 minutes of a corpus campaign)
    for seed, rs, backend, model, device in itertools.product(spec.seeds, rsets, spec.backends, spec.models,
                                                              spec.devices):
        ident = {"model_sha": model_sha[model], "rules": rs["version"], "backend": backend, "device": device,
                 "torch": tv, "seed": seed, "options": options}
        key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
        jobs.append({
            "key": key, "model": str(model), "model_rel": os.path.relpath(model, base),
            "model_sha": model_sha[model], "rule_set": rs["spec"], "rule_args": rs["args"],
            "rule_files": rs["files"], "rule_set_version": rs["version"], "rule_label": rs["label"],
            "backend": backend, "device": device, "seed": seed, "torch_version": tv, "options": options,
            "variants": spec.variants, "inputs": spec.inputs, "run_args": spec.run_args,
            "timeout": spec.job_timeout, "variant_timeout": spec.variant_timeout,
            "run_name": f"{Path(model).stem}-{key[:12]}",
        })
    return jobs


HEARTBEAT_S = 25.0  # a campaign prints a line at least this often (jobs running, their stage, elapsed)


def warm_stamp(rule_args: list[str], job: dict) -> Path:
    """A file saying the rule cache holds this rule set for this torch and this rule compiler: a resumed campaign
    reads it instead of starting a process that imports torch to find the cache complete (seconds per rule set).
    Keyed by the rule files' contents and the code of rewrite/ and lowering/ (the compiler and its capture)."""
    h = hashlib.sha256(f"{CACHE_VERSION}|{job['torch_version']}|{sys.executable}|{job['rule_set_version']}|"
                       f"{' '.join(rule_args)}".encode())
    for sub in ("rewrite", "lowering"):
        for f in sorted((REPO_ROOT / "eqsat_test" / sub).glob("*.py")):
            h.update(f.name.encode() + f.read_bytes())
    return cache_dir() / "warm" / f"{h.hexdigest()[:24]}.ok"


def warm_rule_cache(jobs: list[dict], timeout: float = 1800.0) -> None:
    """Compile each rule set of the jobs once, into the rule cache, before the jobs start: otherwise
    every job of the first wave compiles the same library cold at once (about 4 CPU-minutes each for
    the default library), all of them on a fresh machine. A rule set compiled before (warm_stamp) is
    not asked again. A failure here is left to the jobs to report."""
    seen: dict[tuple, dict] = {}
    for j in jobs:
        seen.setdefault(tuple(j["rule_args"]), j)
    for args, job in seen.items():
        label = " ".join(args) or "default"
        stamp = warm_stamp(list(args), job)
        if stamp.is_file() and (cache_dir() / f"compiled-rules-{CACHE_VERSION}.json").is_file():
            click.echo(f"eqsat-test: rules {label}: in the cache (compiled by an earlier run)", err=True)
            continue
        t0 = last = time.monotonic()
        try:
            p = subprocess.Popen([sys.executable, "-m", "eqsat_test.runners.cli", "rules", "list", "--json", *args],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while p.poll() is None:
                if time.monotonic() - t0 > timeout:
                    p.kill()
                    p.wait()
                    break
                if time.monotonic() - last >= HEARTBEAT_S:
                    last = time.monotonic()
                    click.echo(f"eqsat-test: still compiling rules {label} into the cache "
                               f"({last - t0:.0f} s; once per rule set and torch version)", err=True)
                time.sleep(0.2)
            how = "ok" if p.returncode == 0 else f"exit {p.returncode}"
        except OSError as e:
            how = type(e).__name__
        if how == "ok":
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"))
        click.echo(f"eqsat-test: rules {label} compiled into the cache in "
                   f"{time.monotonic() - t0:.0f} s ({how})", err=True)


def job_budget(job: dict) -> float:
    """The job's run stops starting tasks, confirmations and minimizing this long after its start (its
    --time-budget): what is running then (at most a variant timeout) and the writing end within the job
    timeout, so that a job slowed by load reports its verdicts instead of being killed with them."""
    return max(float(job["timeout"]) - float(job["variant_timeout"]) - JOB_MARGIN, float(job["timeout"]) / 2)


JOB_MARGIN = 30.0  # seconds of a job's timeout kept for start-up and writing the results


def job_command(job: dict, run_dir: Path, model: str | None = None, rule_args: list[str] | None = None,
                jobs: int = 1, models: list[str] | None = None) -> list[str]:
    """`eqsat-test run` for one job; `jobs`: its worker processes (variants compiled and run at once). `models`:
    several model files in one run, each writing RUN_DIR/<its name> (the programs of a batch, runners/campaign/batch.py),
    every other option the job's."""
    cmd = [sys.executable, "-m", "eqsat_test.runners.cli", "run", *(models or [model or job["model"]]),
           "--variants", str(job["variants"]), "--seed", str(job["seed"]),
           "--backend", job["backend"], "--device", job["device"], "--jobs", str(max(1, int(jobs))),
           "--timeout", str(job["variant_timeout"]), "--time-budget", f"{job_budget(job):g}",
           "--inputs", job["inputs"], "--json", "--out", str(run_dir)]
    for r in (job["rule_args"] if rule_args is None else rule_args):
        cmd += ["--rules", r]
    return cmd + list(job["run_args"])


def job_env(token: str, campaign_id: str, cache_dir: Path, threads: int, device: str, gpu: str | None = None) -> dict:
    """Environment of one job: its own Inductor/Triton caches, one compile thread, a share of the cores,
    the GPU it may use (`gpu`: a CUDA_VISIBLE_DEVICES entry; a cpu job sees none, so that no CUDA context of
    its takes memory or time on the campaign's GPUs), and markers by which the campaign finds (and kills)
    every process the job started."""
    env = dict(os.environ)
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    elif gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir / "inductor")
    env["TRITON_CACHE_DIR"] = str(cache_dir / "triton")
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(threads)
    env["PYTHONUNBUFFERED"] = "1"
    env["TQDM_DISABLE"] = "1"
    env["EQSAT_CAMPAIGN"] = campaign_id
    env["EQSAT_JOB"] = token
    return env


# ---------------------------------------------------------------------------------------------
# Processes: each job under a supervisor (runners/campaign/supervise.py) that kills the job's
# whole tree when the campaign dies; the campaign kills a job's tree by its marker
# ---------------------------------------------------------------------------------------------

SUPERVISOR = Path(__file__).with_name("supervise.py")


def _prctl():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # not Linux: timeouts still kill the job's process group
        return None


def _die_with_parent(parent: int, sig: int = signal.SIGKILL):
    """preexec_fn: own session, and `sig` when the campaign process dies (even by kill -9).
    prctl is looked up here, in the parent: nothing may be imported between fork and exec.
    The supervisor gets SIGTERM: it kills the job's processes (its workers have sessions of their
    own: a signal to the job process alone would leave them running) and then itself."""
    prctl = _prctl()

    def fn():
        os.setsid()
        if prctl is not None:
            prctl(1, sig, 0, 0, 0)  # PR_SET_PDEATHSIG (kept across exec)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(137)
    return fn


def kill_marked(marker: str, extra: list[int] = ()) -> int:
    n = 0
    for pid in set(processes_with_env(marker)) | set(extra):
        try:
            os.kill(pid, signal.SIGKILL)
            n += 1
        except (ProcessLookupError, PermissionError):
            pass
    return n


class JobProcess:
    """One running job: `eqsat-test run ... --jobs K --json --out RUN_DIR` under its supervisor, in its own session."""

    def __init__(self, job: dict, run_dir: Path, env: dict, cwd: Path | None = None,
                 model: str | None = None, rule_args: list[str] | None = None, jobs: int = 1,
                 models: list[str] | None = None) -> None:
        self.job, self.run_dir, self.token = job, run_dir, env["EQSAT_JOB"]
        run_dir.mkdir(parents=True, exist_ok=True)
        self.started = time.time()
        self.deadline = time.monotonic() + float(job["timeout"])
        self._out = open(run_dir / "job.stdout", "wb")
        self._err = open(run_dir / "job.log", "wb")
        cmd = [sys.executable, str(SUPERVISOR), str(os.getpid()), f"EQSAT_JOB={self.token}", "--",
               *job_command(job, run_dir, model, rule_args, jobs, models)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err, env=env,
                                     cwd=str(cwd or run_dir), preexec_fn=_die_with_parent(os.getpid(), signal.SIGTERM))
        self.timed_out = False

    def poll(self) -> bool:
        if self.proc.poll() is not None:
            return True
        if time.monotonic() > self.deadline:
            self.timed_out = True
            self.kill()
            return True
        return False

    def wait(self) -> None:
        while not self.poll():
            time.sleep(0.2)

    def kill(self) -> None:
        kill_marked(f"EQSAT_JOB={self.token}", [self.proc.pid])
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass

    def outcome(self) -> dict:
        self._out.close()
        self._err.close()
        kill_marked(f"EQSAT_JOB={self.token}")  # stragglers (the inner worker) of a finished job
        return run_outcome(self.job, self.run_dir, self.proc.returncode, self.timed_out, self.started,
                           lambda: (self.run_dir / "job.log").read_bytes()[-4000:].decode(errors="replace"))


def run_outcome(job: dict, run_dir: Path, rc: int | None, timed_out: bool, started: float,
                log_tail: Callable[[], str]) -> dict:
    """The outcome of one program's run in `run_dir` (its report.json and bundle/manifest.json) that ended with exit
    code `rc` (negative: killed by that signal), or was killed at its timeout: status (done, timeout, crash, bad-input,
    error), the report, and for a run without verdicts why, with the tail of its log."""
    report = _read_json(run_dir / "report.json")
    budget_spent = rc == 2 and report is not None and bool((report.get("stats") or {}).get("budget_spent_while"))
    if timed_out or budget_spent:  # (the run's --time-budget ran out before any task: as a timeout)
        status = "timeout"
    elif rc is not None and rc < 0:
        status = "crash"
    elif report is not None and rc in (0, 1, 3):
        status = "done"
    elif rc == 4:
        status = "bad-input"
    else:
        status = "error"
    err = None
    if status != "done":
        why = (f"the run's time budget ran out while {report['stats']['budget_spent_while']}, before any task"
               if budget_spent and report is not None else
               f"no result within the job timeout of {job['timeout']:.0f} s" if status == "timeout" else
               f"killed by signal {-rc}" if status == "crash" and rc is not None else f"exit code {rc}")
        err = why + "\n" + log_tail()
    manifest = manifest_or_none(run_dir / "bundle")
    rules = manifest.to_dict()["rules"] if manifest is not None else {}  # (the store's record: JSON)
    return {"status": status, "exit_code": rc, "started": started, "finished": time.time(),
            "report": report, "error": err, "host": socket.gethostname(),
            "torch_version": (report or {}).get("torch_version"),
            "rules": {k: rules.get(k) for k in ("names", "families", "fired", "numerics", "count", "errors")}}


def _read_json(p: Path):
    try:
        return json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _rewrite_paths(run_dir: Path, old: str, new: str) -> None:
    """A run made in a temporary folder names it in its JSON: point those names at the final folder."""
    if old == new:
        return
    for p in [run_dir / "job.stdout", *run_dir.rglob("*.json")]:
        if p.is_file():
            t = p.read_text(errors="replace")
            if old in t:
                p.write_text(t.replace(old, new))


def finalize_run(tmp_dir: Path, final_dir: Path, made_in: str, outcome: dict) -> dict:
    """Move a finished job's folder into place (scratch dropped, paths rewritten); returns the outcome
    with `run_dir` set and the report re-read. Safe to repeat: the store is written after this."""
    shutil.rmtree(tmp_dir / "scratch", ignore_errors=True)
    _rewrite_paths(tmp_dir, made_in, str(final_dir))
    if final_dir.exists():
        shutil.rmtree(final_dir)
    os.replace(tmp_dir, final_dir)
    outcome = dict(outcome)
    outcome["run_dir"] = str(final_dir)
    if outcome.get("report") is not None:
        outcome["report"] = _read_json(final_dir / "report.json") or outcome["report"]
    return outcome


# ---------------------------------------------------------------------------------------------
# Ray: the same job, as a task; files travel with it, the run folder comes back as a tarball
# ---------------------------------------------------------------------------------------------

def materialize(path: str, sha: str, content: bytes, where: Path) -> str:
    """A shipped file on this node: its own path where that holds the same bytes, else a copy in `where`."""
    p = Path(path)
    if p.is_file() and _sha_file(p) == sha:
        return path
    where.mkdir(parents=True, exist_ok=True)
    dest = where / p.name
    dest.write_bytes(content)
    return str(dest)


def ray_rule_args(job: dict, files: list[dict], work: Path) -> list[str]:
    """The job's --rules on this node: as given where its rule files are here, else the shipped copies in `work`."""
    if all(Path(r["path"]).is_file() and _sha_file(Path(r["path"])) == r["sha"] for r in files):
        return list(job["rule_args"])
    shipped = work / "rules"  # this node lacks the spec's rule files (no shared file system)
    shipped.mkdir(parents=True)
    for i, r in enumerate(files):
        (shipped / f"r{i:02d}_{Path(r['path']).name}").write_bytes(r["content"])
    return [str(shipped)]


def ray_job(payload: dict, rule_files: list[dict] | None = None) -> dict:
    """Runs on a Ray worker: one job in a subprocess with its timeout, then the run folder as tar.gz.
    `rule_files` ([{path, sha, content}]) is a separate argument so that Ray stores it once per rule set."""
    job = payload["job"]
    work = Path(tempfile.mkdtemp(prefix="eqsat-job-"))
    try:
        m = payload["model"]
        model = materialize(m["path"], m["sha"], m["content"], work / "model")
        files = rule_files if rule_files is not None else payload.get("rule_files") or []
        rule_args = ray_rule_args(job, files, work)
        cache = Path(tempfile.gettempdir()) / "eqsat-ray-cache" / f"worker{os.getpid()}"
        token = f"{job['key'][:16]}-{os.getpid()}-{time.time_ns()}"
        env = job_env(token, payload["campaign_id"], cache, payload.get("threads", 1), job["device"])
        run_dir = work / "run"
        jp = JobProcess(job, run_dir, env, cwd=work, model=model, rule_args=rule_args)
        jp.wait()
        outcome = jp.outcome()
        shutil.rmtree(run_dir / "scratch", ignore_errors=True)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(str(run_dir), arcname=".")
        return {"outcome": outcome, "tar": buf.getvalue(), "made_in": str(run_dir)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


