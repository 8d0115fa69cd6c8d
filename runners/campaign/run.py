"""Campaigns: models x rule sets x backends x devices x seeds, one isolated `eqsat-test run` per job.

A job runs in its own subprocess with a timeout (a crash or hang costs one job), on a local pool
(one job per core) or as Ray tasks; every outcome goes into the campaign's SQLite store
(runners/campaign/store.py) in one transaction, so a campaign killed at any moment resumes where it stopped.
Imports nothing heavy at module level: torch, egglog and ray stay out of `eqsat-test --help`.
"""
from __future__ import annotations

import fnmatch
import glob as globmod
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
from dataclasses import dataclass, field
from pathlib import Path

import click

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILTIN_RULES_DIR = REPO_ROOT / "rules"
RUNS_DIR = "runs"
TMP_DIR = ".tmp"
EXIT_OK, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE = 0, 1, 2, 3, 4

_TOP_KEYS = {"name", "models", "exclude", "rule_sets", "backends", "devices", "variants", "seeds",
             "inputs", "run_args", "jobs", "budget", "executor", "address"}
_BUDGET_KEYS = {"job_timeout", "variant_timeout", "total_seconds"}


# ---------------------------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------------------------

@dataclass
class Spec:
    path: Path
    name: str
    models: list[Path]
    rule_sets: list[list[str]]  # as written; [] = the built-in library
    backends: list[str] = field(default_factory=lambda: ["inductor"])
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    variants: int = 16
    seeds: list[int] = field(default_factory=lambda: [0])
    inputs: str = "given,random,special"
    run_args: list[str] = field(default_factory=list)
    job_timeout: float = 1800.0
    variant_timeout: float = 300.0
    total_seconds: float | None = None
    jobs: int | None = None
    executor: str = "local"
    address: str | None = None


def _load_toml(path: Path) -> dict:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError as e:
            raise click.UsageError("reading a campaign spec on Python 3.10 needs tomli: pip install tomli") from e
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise click.UsageError(f"{path}: not valid TOML: {e}") from e


def _as_list(v, what: str) -> list:
    if v is None:
        return []
    if isinstance(v, (str, int, float)):
        return [v]
    if isinstance(v, list):
        return v
    raise click.UsageError(f"campaign spec: {what} must be a list, not {type(v).__name__}")


def resolve_models(entries: list[str], base: Path, exclude: list[str] = ()) -> list[Path]:
    """Model files named by `entries` (files, folders of .py files, globs), relative to `base`."""
    found: list[Path] = []
    for e in entries:
        p = Path(str(e)).expanduser()
        p = p if p.is_absolute() else base / p
        if any(c in str(e) for c in "*?["):
            hits = [Path(h) for h in sorted(globmod.glob(str(p), recursive=True))]
            hits = [h for h in hits if h.is_file() and h.suffix == ".py"]
        elif p.is_dir():
            hits = sorted(f for f in p.glob("*.py") if not f.name.startswith("_"))
        elif p.is_file():
            hits = [p]
        else:
            raise click.UsageError(f"campaign spec: models entry {e!r}: no such file or folder ({p})")
        if not hits:
            raise click.UsageError(f"campaign spec: models entry {e!r} matched no .py file")
        found.extend(h.resolve() for h in hits)
    out, seen = [], set()
    for f in found:
        rel = os.path.relpath(f, base)
        if f in seen or any(fnmatch.fnmatch(rel, x) or fnmatch.fnmatch(f.name, x) for x in exclude):
            continue
        seen.add(f)
        out.append(f)
    return out


def _builtin_rule_files() -> list[Path]:
    return sorted(f for f in BUILTIN_RULES_DIR.glob("*.py") if not f.name.startswith("_"))


def resolve_rule_spec(item: str, base: Path) -> tuple[str, list[Path]]:
    """One --rules spec -> (the argument to pass to `eqsat-test run`, the rule files it names).
    Mirrors rewrite.ruledsl.rule_files without importing torch."""
    s = str(item)
    p = Path(s).expanduser()
    p = p if p.is_absolute() else base / p
    if p.is_dir():
        return str(p.resolve()), sorted(f.resolve() for f in p.glob("*.py") if not f.name.startswith("_"))
    if p.is_file():
        return str(p.resolve()), [p.resolve()]
    if s in ("all", "default"):
        return s, _builtin_rule_files()
    b = BUILTIN_RULES_DIR / f"{s}.py"
    if b.is_file():
        return s, [b]
    names = ", ".join(f.stem for f in _builtin_rule_files())
    raise click.UsageError(f"campaign spec: rule set item {s!r}: no such file or folder, and no built-in "
                           f"rule set of that name (built-in: {names})")


def load_spec(path: str | Path, overrides: dict | None = None) -> Spec:
    path = Path(path).resolve()
    raw = _load_toml(path)
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise click.UsageError(f"{path}: unknown key(s) {sorted(unknown)}; known: {sorted(_TOP_KEYS)}")
    budget = raw.get("budget", {}) or {}
    if not isinstance(budget, dict) or set(budget) - _BUDGET_KEYS:
        raise click.UsageError(f"{path}: [budget] knows only {sorted(_BUDGET_KEYS)}")
    base = path.parent
    if not raw.get("models"):
        raise click.UsageError(f"{path}: `models` is required (files, folders or globs, relative to the spec)")
    models = resolve_models([str(m) for m in _as_list(raw["models"], "models")], base,
                            [str(x) for x in _as_list(raw.get("exclude"), "exclude")])
    rs_raw = raw.get("rule_sets", [[]])
    rule_sets: list[list[str]] = []
    for rs in _as_list(rs_raw, "rule_sets"):
        items = [str(x) for x in _as_list(rs, "a rule set")]
        rule_sets.append([] if items in (["default"], []) else items)
    rule_sets = rule_sets or [[]]
    for rs in rule_sets:  # validate early: a typo is a usage error, not N failing jobs
        for item in rs:
            resolve_rule_spec(item, base)
    devices = [str(d) for d in _as_list(raw.get("devices", ["cpu"]), "devices")]
    if set(devices) - {"cpu", "cuda"}:
        raise click.UsageError(f"{path}: devices must be cpu and/or cuda, not {devices}")

    def num(v, what, cast=float):
        if v is None:
            return None
        try:
            return cast(v)
        except (TypeError, ValueError) as e:
            raise click.UsageError(f"{path}: {what} must be a number, not {v!r}") from e

    spec = Spec(
        path=path, name=str(raw.get("name") or path.stem), models=models, rule_sets=rule_sets,
        backends=[str(b) for b in _as_list(raw.get("backends", ["inductor"]), "backends")],
        devices=devices, variants=num(raw.get("variants", 16), "variants", int),
        seeds=[num(s, "seeds", int) for s in _as_list(raw.get("seeds", [0]), "seeds")],
        inputs=str(raw.get("inputs", "given,random,special")),
        run_args=[str(a) for a in _as_list(raw.get("run_args"), "run_args")],
        job_timeout=num(budget.get("job_timeout", 1800), "budget.job_timeout"),
        variant_timeout=num(budget.get("variant_timeout", 300), "budget.variant_timeout"),
        total_seconds=num(budget.get("total_seconds"), "budget.total_seconds") or None,
        jobs=num(raw.get("jobs"), "jobs", int) or None,
        executor=str(raw.get("executor", "local")), address=raw.get("address"),
    )
    for k, v in (overrides or {}).items():
        if v is not None:
            setattr(spec, k, v)
    if spec.executor not in ("local", "ray"):
        raise click.UsageError(f"executor must be local or ray, not {spec.executor!r}")
    return spec


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
            files = _builtin_rule_files()
        h = hashlib.sha256()
        for f in sorted(set(files)):
            h.update(f"{f.name}:{_sha_file(f)}\n".encode())
        rsets.append({"spec": rs, "args": args, "files": [str(f) for f in sorted(set(files))],
                      "version": h.hexdigest()[:16], "label": "+".join(rs) if rs else "default"})
    options = {"variants": spec.variants, "inputs": spec.inputs, "run_args": spec.run_args}
    jobs = []
    for seed, rs, backend, device, model in itertools.product(spec.seeds, rsets, spec.backends, spec.devices,
                                                              spec.models):
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


def job_command(job: dict, run_dir: Path, model: str | None = None, rule_args: list[str] | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "runners.cli", "run", model or job["model"],
           "--variants", str(job["variants"]), "--seed", str(job["seed"]),
           "--backend", job["backend"], "--device", job["device"], "--jobs", "1",
           "--timeout", str(job["variant_timeout"]), "--inputs", job["inputs"],
           "--json", "--out", str(run_dir)]
    for r in (job["rule_args"] if rule_args is None else rule_args):
        cmd += ["--rules", r]
    return cmd + list(job["run_args"])


def job_env(token: str, campaign_id: str, cache_dir: Path, threads: int) -> dict:
    """Environment of one job: its own Inductor/Triton caches, one compile thread, a share of the cores,
    and markers by which the campaign finds (and kills) every process the job started."""
    env = dict(os.environ)
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
# Processes: start with a parent-death signal, kill a job's whole tree by its marker
# ---------------------------------------------------------------------------------------------

def _prctl():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # not Linux: timeouts still kill the job's process group
        return None


def _die_with_parent(parent: int):
    """preexec_fn: own session, and SIGKILL when the campaign process dies (even by kill -9).
    prctl is looked up here, in the parent: nothing may be imported between fork and exec."""
    prctl = _prctl()

    def fn():
        os.setsid()
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(137)
    return fn


def processes_with_env(marker: str) -> list[int]:
    """Pids of this user's processes whose environment holds `marker` (e.g. 'EQSAT_JOB=abc')."""
    needle = b"\0" + marker.encode() + b"\0"
    pids = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for e in entries:
        if not e.isdigit() or int(e) == me:
            continue
        try:
            with open(f"/proc/{e}/environ", "rb") as fh:
                if needle in b"\0" + fh.read() + b"\0":
                    pids.append(int(e))
        except OSError:
            continue
    return pids


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
    """One running job: `eqsat-test run ... --jobs 1 --json --out RUN_DIR` in its own session."""

    def __init__(self, job: dict, run_dir: Path, env: dict, cwd: Path | None = None,
                 model: str | None = None, rule_args: list[str] | None = None) -> None:
        self.job, self.run_dir, self.token = job, run_dir, env["EQSAT_JOB"]
        run_dir.mkdir(parents=True, exist_ok=True)
        self.started = time.time()
        self.deadline = time.monotonic() + float(job["timeout"])
        self._out = open(run_dir / "job.stdout", "wb")
        self._err = open(run_dir / "job.log", "wb")
        self.proc = subprocess.Popen(job_command(job, run_dir, model, rule_args), stdin=subprocess.DEVNULL,
                                     stdout=self._out, stderr=self._err, env=env, cwd=str(cwd or run_dir),
                                     preexec_fn=_die_with_parent(os.getpid()))
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
        rc = self.proc.returncode
        report = _read_json(self.run_dir / "report.json")
        if self.timed_out:
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
            tail = (self.run_dir / "job.log").read_bytes()[-4000:].decode(errors="replace")
            why = (f"no result within the job timeout of {self.job['timeout']:.0f} s" if status == "timeout" else
                   f"killed by signal {-rc}" if status == "crash" else f"exit code {rc}")
            err = why + "\n" + tail
        manifest = _read_json(self.run_dir / "bundle" / "manifest.json") or {}
        rules = manifest.get("rules") or {}
        return {"status": status, "exit_code": rc, "started": self.started, "finished": time.time(),
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

def _materialize(path: str, sha: str, content: bytes, where: Path) -> str:
    p = Path(path)
    if p.is_file() and _sha_file(p) == sha:
        return path
    where.mkdir(parents=True, exist_ok=True)
    dest = where / p.name
    dest.write_bytes(content)
    return str(dest)


def ray_job(payload: dict, rule_files: list[dict] | None = None) -> dict:
    """Runs on a Ray worker: one job in a subprocess with its timeout, then the run folder as tar.gz.
    `rule_files` ([{path, sha, content}]) is a separate argument so that Ray stores it once per rule set."""
    job = payload["job"]
    work = Path(tempfile.mkdtemp(prefix="eqsat-job-"))
    try:
        m = payload["model"]
        model = _materialize(m["path"], m["sha"], m["content"], work / "model")
        rule_args = list(job["rule_args"])
        files = rule_files if rule_files is not None else payload.get("rule_files") or []
        if any(not (Path(r["path"]).is_file() and _sha_file(Path(r["path"])) == r["sha"]) for r in files):
            shipped = work / "rules"  # this node lacks the spec's rule files (no shared file system)
            shipped.mkdir(parents=True)
            for i, r in enumerate(files):
                (shipped / f"r{i:02d}_{Path(r['path']).name}").write_bytes(r["content"])
            rule_args = [str(shipped)]
        cache = Path(tempfile.gettempdir()) / "eqsat-ray-cache" / f"worker{os.getpid()}"
        token = f"{job['key'][:16]}-{os.getpid()}-{time.time_ns()}"
        env = job_env(token, payload["campaign_id"], cache, payload.get("threads", 1))
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


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

@click.command(name="campaign")
@click.argument("spec", type=click.Path(exists=True, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Campaign folder (default: <SPEC without .toml>-out beside SPEC).")
@click.option("--jobs", "-j", type=int, default=None,
              help="Jobs at once (default: one per core; with --executor ray --address local: the cluster's CPUs).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default=None,
              help="local process pool (default) or Ray tasks.")
@click.option("--address", default=None,
              help="Ray cluster address (host:port, ray://...), or 'local' to start one here "
                   "(default: $RAY_ADDRESS if set, else local).")
@click.option("--dry-run", is_flag=True, help="List the jobs (and which are done) and exit.")
@click.option("--retry-failed", is_flag=True, help="Run again the jobs that ended in error, timeout or crash.")
@click.option("--job-timeout", type=float, default=None, help="Seconds per job (overrides budget.job_timeout).")
@click.option("--total-seconds", type=float, default=None,
              help="Stop starting jobs after this long (overrides budget.total_seconds); resume later.")
@click.option("--export-jsonl", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the store as JSON lines (campaign, jobs, findings) to this file and exit; runs nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON summary on stdout; progress as plain lines on stderr.")
def campaign_cmd(spec, out, jobs, executor, address, dry_run, retry_failed, job_timeout, total_seconds,
                 export_jsonl, as_json):
    """Run many models x rule sets x backends x devices x seeds; resumable, results in one SQLite store.

    \b
    SPEC is a TOML file (see examples/campaign.toml):
      name = "nightly"
      models = ["../examples", "more/*.py"]     # files, folders, globs; relative to SPEC
      exclude = ["*_big.py"]
      rule_sets = [["default"], ["algebra", "layout"], ["./my_rules"]]   # each a list of --rules specs
      backends = ["inductor", "aot_eager"]
      devices = ["cpu"]                         # and/or "cuda"
      variants = 16                             # per model and job
      seeds = [0, 1]
      inputs = "given,random,special"
      run_args = ["--iterations", "6"]          # more options for each `eqsat-test run`
      [budget]
      job_timeout = 1800                        # seconds per job (it is killed after)
      variant_timeout = 300                     # seconds per variant task inside a job
      total_seconds = 0                         # stop starting jobs after this (0: no limit)

    \b
    A flat list of names, rule_sets = ["algebra", "layout"], means one rule set per name.
    With --executor ray, every node needs eqsat-test (and egglog) installed; model and rule files
    travel with the tasks, run folders come back to OUT; GPU jobs ask Ray for one GPU each.

    \b
    A job is one (model, rule set, backend, device, seed): `eqsat-test run ... --jobs 1` in its own
    subprocess. Its key hashes the model's content, the rule files' contents, backend, device,
    torch version, seed and options: running the same SPEC again skips finished jobs (resume).
    SPEC may also be a campaign folder, for --export-jsonl or --dry-run.
    Exit codes: 0 nothing found, 1 compiler-bug candidates in the store, 2 interrupted or
    budget spent (run again to resume), 3 some job failed inside eqsat-test, 4 usage error.
    """
    from runners.campaign.store import STORE_NAME, Store
    if spec.is_dir() or spec.suffix == ".sqlite":
        folder = spec if spec.is_dir() else spec.parent
        if not (folder / STORE_NAME).is_file():
            raise click.UsageError(f"{spec}: not a campaign spec (.toml) nor a campaign folder (no {STORE_NAME})")
        if not (export_jsonl or dry_run):
            raise click.UsageError("a campaign folder can only be exported (--export-jsonl) or listed (--dry-run); "
                                   "to run, give the spec file")
        with Store(folder / STORE_NAME) as store:
            if export_jsonl:
                n = store.export_jsonl(export_jsonl)
                click.echo(f"eqsat-test: wrote {n} lines to {export_jsonl}", err=True)
            if dry_run:
                _print_jobs([_stored_job_row(j) for j in store.jobs()], as_json)
        sys.exit(EXIT_OK)

    sp = load_spec(spec, {"executor": executor, "address": address, "jobs": jobs, "job_timeout": job_timeout,
                          "total_seconds": total_seconds})
    out = _resolve_out(sp.path, out)
    if export_jsonl:
        if not (out / STORE_NAME).is_file():
            raise click.UsageError(f"{out}: no campaign store yet (run the campaign first)")
        with Store(out / STORE_NAME) as store:
            n = store.export_jsonl(export_jsonl)
        click.echo(f"eqsat-test: wrote {n} lines to {export_jsonl}", err=True)
        sys.exit(EXIT_OK)
    if dry_run:
        js = make_jobs(sp)
        status: dict[str, str] = {}
        if (out / STORE_NAME).is_file():
            with Store(out / STORE_NAME) as store:
                status = store.status_of(j["key"] for j in js)
        rows = [{"key": j["key"][:12], "status": status.get(j["key"], "pending"), "model": j["model_rel"],
                 "rules": j["rule_label"], "backend": j["backend"], "device": j["device"], "seed": j["seed"],
                 "run_dir": str(out / RUNS_DIR / j["run_name"])} for j in js]
        _print_jobs(rows, as_json)
        sys.exit(EXIT_OK)

    prev = None
    try:
        prev = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread
        pass
    try:
        summary = run_campaign(sp, out, as_json=as_json, retry_failed=retry_failed)
    finally:
        if prev is not None:
            signal.signal(signal.SIGTERM, prev)
    if as_json:
        click.echo(json.dumps(summary, default=str))
    else:
        click.echo(_text_summary(summary))
    sys.exit(exit_code(summary))


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def exit_code(summary: dict) -> int:
    j = summary["jobs"]
    if summary["compiler_bugs"]:
        return EXIT_FOUND
    if summary.get("run", {}).get("left") or j.get("pending"):
        return EXIT_INTERRUPTED
    if j.get("error") or j.get("crash"):
        return EXIT_INTERNAL
    return EXIT_OK


def _stored_job_row(j: dict) -> dict:
    return {"key": j["key"][:12], "status": j["status"], "model": j["model"],
            "rules": "+".join(j["rule_set"] or []) or "default", "backend": j["backend"], "device": j["device"],
            "seed": j["seed"], "run_dir": j["run_dir"]}


def _print_jobs(rows: list[dict], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"jobs": rows, "count": len(rows)}))
        return
    for r in rows:
        click.echo(f"{r['key']}  {r['status']:<9} {r['model']:<40} {r['rules']:<20} {r['backend']}/{r['device']} "
                   f"seed={r['seed']}")
    by: dict[str, int] = {}
    for r in rows:
        by[r["status"]] = by.get(r["status"], 0) + 1
    click.echo(f"{len(rows)} jobs: " + ", ".join(f"{v} {k}" for k, v in sorted(by.items())))


@click.command(name="report")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HTML file to write (default: FOLDER/report.html).")
@click.option("--title", default=None, help="Page title (default: the campaign's or model's name).")
def report_cmd(folder, out, title):
    """A self-contained HTML report of a campaign folder or a run folder (FOLDER/report.html).

    Findings grouped by signature with their repro code, counts and where they were seen; charts of
    findings per rule family, op, backend and device; variants checked per minute; rules that never fired."""
    from runners.campaign.report import write_report
    path = write_report(folder, out, title=title)
    click.echo(str(path))
