"""Hunt mode as a campaign: generated programs fed to the campaign runner in batches of a few programs a process (on a local pool that a refill keeps busy, or on Ray in waves), each program's verdicts in the campaign store, resumable, with a progress line of programs per minute, candidates, root causes and ledger matches.

Each program is a model file under OUT/programs/ (its seed and source also in the store's `programs` table), and
its job is an ordinary campaign job (`eqsat-test run PROGRAM ...` with small per-program settings: a few variants,
sweeps on one program in `sweep_every`), so clustering, the ledger, the report and `campaign --dry-run` work on a
hunt's folder as on any campaign's. Up to `programs_per_job` jobs of one command run in one process
(runners/campaign/batch.py: `eqsat-test run P1 P2 ...`), each still recorded as its own job. Run the same command
again to go on: programs generated but not judged run first, then new seeds follow the last one.
"""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click

from eqsat_test.runners.campaign.batch import Batcher
from eqsat_test.runners.campaign.hunt_programs import PROGRAMS_DIR, SEED_STRIDE, Generator, ProgramTable, is_window
from eqsat_test.runners.campaign.jobs import kill_marked, make_jobs, warm_rule_cache
from eqsat_test.runners.campaign.progress import Progress, RunStats
from eqsat_test.runners.campaign.run import (
    GpuSampler,
    campaign_id_of,
    gpu_free_memory,
    gpu_ids,
    lock_out,
    plan_slots,
    run_local,
    summarize,
)
from eqsat_test.runners.campaign.spec import RUNS_DIR, TMP_DIR, Spec
from eqsat_test.runners.protocol import cpu_cores, past

# Imports inside functions: the store pulls in the findings' records (torch) only when a hunt runs.

HUNT_FILE = "hunt.json"  # the hunt's options, as last run


@dataclass(frozen=True)
class HuntOptions:
    """A hunt's settings. The per-program ones are small on purpose: many programs beat many variants of one."""

    minutes: float
    devices: tuple[str, ...] = ("cpu",)
    jobs: int | None = None  # programs judged at once (default: one per core)
    seed: int = 0
    variants: int = 4  # variants of each program the e-graph gives
    sweep_every: int = 8  # one program in this many also gets the dtype and size sweeps (0: none)
    inplace: bool = True  # in-place ops and writes to inputs in the generated programs
    rules: tuple[str, ...] = ()  # --rules specs (default: the built-in library)
    sat_seconds: float = 2.0
    job_timeout: float = 900.0
    variant_timeout: float = 120.0
    minimize_seconds: float = 120.0
    executor: str = "local"
    address: str | None = None
    programs_per_job: int = 8  # programs judged one after another in one process (its start paid once)
    windows_from: tuple[str, ...] = ()  # model files (resolved) that windows of real graphs are cut from
    windows_share: float = 0.0  # the share of programs that are windows (hunt_programs.WINDOW_SHARE, or 1)

    def run_args(self, sweep: bool) -> list[str]:
        """The `eqsat-test run` options of one program's job."""
        args = ["--sat-seconds", f"{self.sat_seconds:g}", "--minimize-seconds", f"{self.minimize_seconds:g}",
                "--artifacts-max", "2"]
        return args + (["--sweep-points", "1"] if sweep else ["--no-sweep"])


@dataclass
class HuntState:
    """What a running hunt counts besides the store."""

    generated: int = 0
    discarded: int = 0
    started: float = field(default_factory=time.monotonic)


def program_jobs(opts: HuntOptions, out: Path, path: Path, record: dict) -> list[dict]:
    """The campaign jobs of one program: one per device, its backend compiling with dynamic=True where the
    program says so, sweeps where its seed falls on `sweep_every`."""
    sweep = bool(opts.sweep_every) and int(record.get("seed", 0)) % opts.sweep_every == 0
    spec = Spec(path=out / HUNT_FILE, name="hunt", models=[path.resolve()], rule_sets=[list(opts.rules)],
                backends=["inductor-dynamic" if record.get("dynamic") else "inductor"], devices=list(opts.devices),
                variants=opts.variants, seeds=[0], inputs="given,random,special", run_args=opts.run_args(sweep),
                job_timeout=opts.job_timeout, variant_timeout=opts.variant_timeout)
    return make_jobs(spec)


class Feeder:
    """The refill of the local pool (and the waves of Ray): batches of the next programs' jobs (runners/campaign/
    batch.py: up to `programs_per_job` of one command each), generated on demand, the programs a killed hunt left
    unjudged first (a batch of theirs not full is filled up with new programs)."""

    def __init__(self, opts: HuntOptions, out: Path, table: ProgramTable, store, state: HuntState) -> None:
        from eqsat_test.hunt import GENERATOR_VERSION  # (the generator's version; torch comes with it)
        self.version = GENERATOR_VERSION
        self.opts, self.out, self.table, self.store, self.state = opts, out, table, store, state
        self.gen = Generator(out / PROGRAMS_DIR, inplace=opts.inplace, windows_from=opts.windows_from)
        self.next_idx = table.next_index(opts.seed)
        done = store.finished_keys()
        self.backlog: list[dict] = []  # the jobs of programs made before and not judged
        for row in table.ok_programs():
            path = table.restore_file(row)
            self.backlog += [j for j in program_jobs(opts, out, path, row["record"]) if j["key"] not in done]
        self.batcher = Batcher(opts.programs_per_job)
        self.ready = [b for j in self.backlog for b in self.batcher.add(j)]  # batches made, first in line

    def __call__(self, n: int) -> list[list[dict]]:
        batches, self.ready = self.ready, []
        tries = 0
        while len(batches) < n and tries < 20 * n * self.opts.programs_per_job:
            tries += 1
            idx = self.next_idx
            self.next_idx += 1
            seed = self.opts.seed * SEED_STRIDE + idx
            made = self.gen.make(seed, window=bool(self.opts.windows_from) and is_window(seed, self.opts.windows_share))
            self.table.add(self.opts.seed, idx, made, (made.record or {}).get("version", self.version))
            if not made.ok or made.path is None:
                self.state.discarded += 1
                continue
            self.state.generated += 1
            for job in program_jobs(self.opts, self.out, Path(made.path), made.record or {}):
                batches += self.batcher.add(job)
        if len(batches) < n:  # the generator gives no more: what waits goes out as it is
            batches += self.batcher.flush()
        self.ready = batches[n:]  # made ahead: first in line next time
        return batches[:n]

    def close(self) -> None:
        self.gen.close()


class HuntProgress(Progress):
    """One line at most every `every` seconds, and at each new candidate: programs generated, discarded and judged,
    programs per minute, candidates, root causes, ledger matches."""

    def __init__(self, store, state: HuntState, every: float = 20.0) -> None:
        super().__init__(0, store.counts(), plain=True)
        self.store, self.state, self.every = store, state, every
        self.judged, self.shown = 0, 0.0
        self.bugs = store.counts()["compiler_bugs"]

    def update(self, job: dict, outcome: dict, counts: dict) -> None:
        self.done += 1
        self.judged += 1
        self.last = time.monotonic()
        if counts["compiler_bugs"] != self.bugs or self.last - self.shown >= self.every:
            self.bugs = counts["compiler_bugs"]
            self.shown = self.last
            click.echo(f"eqsat-test: hunt {progress_line(self.store, self.state, self.judged)}", err=True)

    def heartbeat(self, running) -> None:
        now = time.monotonic()
        if now - max(self.last, self.shown) >= self.every * 3:
            self.shown = now
            click.echo(f"eqsat-test: hunt {progress_line(self.store, self.state, self.judged)} | "
                       f"{len(running)} running", err=True)


def ledger_ids(clusters) -> list[int]:
    """Ledger entries the clusters were matched to when recorded (the progress line's; the summary re-matches)."""
    return sorted({i for c in clusters for i in c.ledger})


def progress_line(store, state: HuntState, judged: int) -> str:
    el = max(1e-9, time.monotonic() - state.started)
    counts = store.counts()
    clusters = store.clusters()
    led = ledger_ids(clusters)
    return (f"{el / 60:.1f} min: {state.generated} programs made ({state.discarded} discarded), {judged} judged, "
            f"{judged / el * 60:.1f}/min | candidates {counts['compiler_bugs']}, root causes {counts['root_causes']}, "
            f"ledger matches {len(led)}" + (f" ({', '.join(f'#{i}' for i in led)})" if led else ""))


def run_hunt(opts: HuntOptions, out: Path, *, as_json: bool = False) -> dict:
    """Hunt for `opts.minutes` (or go on with an earlier hunt in OUT); returns the summary."""
    from eqsat_test.runners.campaign.hunt_issues import draft_issues
    from eqsat_test.runners.campaign.store import STORE_NAME, Store
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    lock = lock_out(out)
    cid = campaign_id_of(out)
    orphans = kill_marked(f"EQSAT_CAMPAIGN={cid}")
    shutil.rmtree(out / RUNS_DIR / TMP_DIR, ignore_errors=True)
    store = Store(out / STORE_NAME)
    feeder = None
    try:
        store.set_meta(name="hunt", mode="hunt", out=str(out), hunt=asdict(opts))
        (out / HUNT_FILE).write_text(json.dumps(asdict(opts), indent=1))
        store.mark_interrupted()
        table = ProgramTable(store)
        state = HuntState()
        feeder = Feeder(opts, out, table, store, state)
        if orphans:
            click.echo(f"eqsat-test: killed {orphans} leftover process(es) of an earlier run of this hunt", err=True)
        if "cuda" in opts.devices and opts.executor == "local" and not gpu_ids():
            raise click.UsageError("--device cuda: this machine has no NVIDIA GPU")
        cores = cpu_cores()
        many = 10 ** 6  # a hunt's jobs are not counted ahead: as many as slots
        n_cpu, n_cuda = (many if "cpu" in opts.devices else 0), (many if "cuda" in opts.devices else 0)
        plan = plan_slots(opts.jobs or cores, cores, n_cpu, n_cuda, gpu_ids(),
                          gpu_free_memory() if n_cuda else None) if opts.executor == "local" else None
        click.echo(f"eqsat-test: hunt for {opts.minutes:g} min on {', '.join(opts.devices)} ({opts.executor}"
                   + (f": {plan.at_once} processes at once, --jobs {plan.per_job} each" if plan else "")
                   + f"; up to {opts.programs_per_job} programs a process"
                   + f"); {table.next_index(opts.seed)} programs of seed {opts.seed} made before, "
                   f"{len(feeder.backlog)} job(s) left from them; store {out / STORE_NAME}", err=True)
        first = feeder(1)  # the rule set compiled into the cache once, before any job needs it
        warm_rule_cache([j for b in first for j in b])
        feeder.ready[:0] = first
        progress = HuntProgress(store, state)
        deadline = time.monotonic() + opts.minutes * 60
        t0, started = time.monotonic(), time.time()
        sampler = GpuSampler().start() if "cuda" in opts.devices and opts.executor == "local" else None
        try:
            if plan is None:
                stats = _run_ray_waves(opts, out, store, feeder, cid, progress, deadline)
            else:
                stats = run_local([], store, out, plan, cid, progress, deadline, refill=feeder)
        finally:
            progress.close()
            gpu_util = sampler.stop() if sampler is not None else None
        summary = summarize(store, out, None)
        summary["issues"] = [str(p) for p in draft_issues(store, out)]
        summary.update(hunt_numbers(store, table, out, time.monotonic() - t0, state, progress.judged,
                                    plan.at_once * plan.per_job if plan else cores, started_at=started))
        summary["run"] = {"ran": stats.ran, "skipped": 0, "left": stats.left, "budget_spent": stats.budget_spent,
                          "wall_seconds": round(time.monotonic() - t0, 2), "executor": opts.executor,
                          **(plan.as_dict() if plan else {}), "peak_at_once": stats.peak_at_once,
                          "gpu_util": gpu_util}
        store.add_run({k: v for k, v in summary["run"].items() if k != "gpu_util"})
        return summary
    finally:
        if feeder is not None:
            feeder.close()
        store.close()
        lock.close()


def _run_ray_waves(opts: HuntOptions, out: Path, store, feeder: Feeder, cid: str, progress, deadline):
    """On Ray: waves of programs, one per CPU of the cluster, until the deadline (the last wave finishes, as the
    local pool's running jobs do); one connection for all."""
    try:
        import ray
    except ImportError as e:
        raise click.UsageError("--executor ray needs Ray, which is not installed: pip install 'eqsat-test[ray]'") from e
    from eqsat_test.runners.campaign.raypool import run_ray
    started = not ray.is_initialized()
    if started:
        ray.init(address=opts.address or None, include_dashboard=False, log_to_driver=False)
    total = RunStats()
    try:
        wave = max(1, int(ray.cluster_resources().get("CPU", 1)))
        while not past(deadline):
            jobs = feeder(wave)
            if not jobs:
                break
            s = run_ray(jobs, store, out, None, None, cid, progress, None)
            total.ran, total.left = total.ran + s.ran, s.left
            total.peak_at_once = max(total.peak_at_once, sum(map(len, jobs)))
    finally:
        if started:
            ray.shutdown()
    return total


def hunt_numbers(store, table: ProgramTable, out: Path, wall: float, state: HuntState, judged: int,
                 cores: int, started_at: float = 0.0) -> dict:
    """The hunt's figures: programs made, discarded (by stage), judged; variants and tasks judged; per minute and
    per core-hour (this run's); candidates, root causes, ledger matches, internal errors (by message)."""
    pc = table.counts()
    jobs = store.jobs()
    tasks_now = sum(int(j.get("executed") or 0) for j in jobs if j["status"] == "done"
                    and (j.get("started") or 0) >= started_at)
    variants = sum(int(j.get("variants") or 0) for j in jobs if j["status"] == "done")
    executed = sum(int(j.get("executed") or 0) for j in jobs if j["status"] == "done")
    internal: dict[str, int] = {}
    for j in jobs:
        if j["status"] in ("error", "crash") or j.get("exit_code") == 3:
            key = internal_error_line(str(j.get("error") or ""), j["status"])
            internal[key] = internal.get(key, 0) + 1
    from eqsat_test.runners.campaign.hunt_issues import ledger_ids_now  # (re-matched as the ledger is now)
    from eqsat_test.runners.findings.ledger import load_ledger
    clusters = store.clusters()
    ledger = load_ledger()
    now = [ledger_ids_now(c, ledger) for c in clusters]
    core_hours = max(1e-9, wall * cores / 3600)
    return {"programs": pc["ok"], "discarded": pc["discarded"], "discarded_by_stage": pc["by_stage"],
            "judged": sum(1 for j in jobs if j["status"] == "done"), "variants": variants, "executed": executed,
            "this_run": {"programs_made": state.generated, "discarded": state.discarded, "judged": judged,
                         "minutes": round(wall / 60, 2), "programs_per_minute": round(judged / max(1e-9, wall) * 60, 2),
                         "cores": cores, "judged_per_core_hour": round(judged / core_hours, 1),
                         "tasks_per_core_hour": round(tasks_now / core_hours, 1)},
            "candidates": store.counts()["compiler_bugs"], "root_causes": len(clusters),
            "ledger_matches": sorted({i for ids in now for i in ids}), "new_root_causes": sum(1 for ids in now if not ids),
            "internal_errors": sum(internal.values()), "internal_error_kinds": internal}


def internal_error_line(log_tail: str, status: str) -> str:
    """What a failed job's log says went wrong inside eqsat-test, in one line (its traceback file left out)."""
    for line in reversed(log_tail.splitlines()):
        if "internal error:" in line:
            return line.split("internal error:", 1)[1].split("(traceback:")[0].strip()[:160]
    first = next((ln.strip() for ln in log_tail.splitlines() if ln.strip()), "")
    return f"{status}: {first[:150]}" if first else status


def hunt_text(s: dict) -> str:
    """The hunt's summary: its figures, then the campaign's root-cause table (runners/campaign/run.py)."""
    from eqsat_test.runners.campaign.run import text_summary
    r = s["this_run"]
    lines = [f"eqsat-test: hunt: {s['programs']} programs made, {s['discarded']} discarded "
             f"({', '.join(f'{k} {v}' for k, v in s['discarded_by_stage'].items()) or 'none'}), {s['judged']} judged "
             f"({s['variants']} variants, {s['executed']} tasks)",
             f"  this run: {r['judged']} programs judged in {r['minutes']:.1f} min ({r['programs_per_minute']:.1f}/min; "
             f"per core-hour on {r['cores']} core(s): {r['judged_per_core_hour']:.0f} programs, "
             f"{r['tasks_per_core_hour']:.0f} seeds and variants)",
             f"  candidates {s['candidates']}, root causes {s['root_causes']} ({s['new_root_causes']} not in the "
             f"ledger), ledger matches: {', '.join(f'#{i}' for i in s['ledger_matches']) or 'none'}"]
    if s["internal_errors"]:
        lines.append(f"  internal errors of eqsat-test: {s['internal_errors']}")
        lines += [f"    {n} x {k}" for k, n in sorted(s["internal_error_kinds"].items(), key=lambda kv: -kv[1])]
    for p in s.get("issues") or []:
        lines.append(f"  draft upstream report: {p}")
    return "\n".join(lines) + "\n" + text_summary(s)
