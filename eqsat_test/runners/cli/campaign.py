"""The `eqsat-test campaign` and `eqsat-test report` commands."""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import click

# Imports inside functions: `eqsat-test campaign --help` and spec errors stay fast (no torch).
from eqsat_test.runners.campaign.jobs import make_jobs
from eqsat_test.runners.campaign.run import campaign_running, resolve_out, run_campaign, shown_status, text_summary
from eqsat_test.runners.campaign.spec import RUNS_DIR, load_spec
from eqsat_test.runners.records import ExitCode

# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

@click.command(name="campaign")
@click.argument("spec", type=click.Path(exists=True, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Campaign folder (default: <SPEC without .toml>-out beside SPEC).")
@click.option("--jobs", "-j", type=int, default=None,
              help="Jobs at once (default: one per core, cuda jobs too, those at most one per 4 GiB of free GPU "
                   "memory; each job runs cores/jobs workers; with --executor ray --address local: the cluster's CPUs).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default=None,
              help="local process pool (default) or Ray tasks.")
@click.option("--address", default=None,
              help="Ray cluster address (host:port, ray://...), or 'local' to start one here "
                   "(default: $RAY_ADDRESS if set, else local).")
@click.option("--dry-run", is_flag=True,
              help="List the jobs and their status (pending, running, interrupted: started by a campaign process "
                   "that is gone, run again on resume; done, error, ...) and exit.")
@click.option("--retry-failed", is_flag=True, help="Run again the jobs that ended in error, timeout or crash.")
@click.option("--job-timeout", type=float, default=None, help="Seconds per job (overrides budget.job_timeout).")
@click.option("--total-seconds", type=float, default=None,
              help="Stop starting jobs after this long (overrides budget.total_seconds); the running ones finish (on Ray the outstanding tasks are cancelled); resume later.")
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
    A job is one (model, rule set, backend, device, seed): `eqsat-test run ... --jobs K` in its own
    subprocess (K = cores / jobs at once), killed with all its processes if the campaign dies.
    Its key hashes the model's content, the rule files' contents, backend, device, torch version,
    seed and options: running the same SPEC again skips finished jobs (resume).
    SPEC may also be a campaign folder, for --export-jsonl or --dry-run.
    Exit codes: 0 nothing found, 1 compiler-bug candidates in the store, 2 interrupted or
    budget spent (run again to resume), 3 some job failed inside eqsat-test, 4 usage error.
    When several hold, the first in the order 1, 2, 3 wins: candidates found with the budget spent
    exit 1; --json then carries both facts: "compiler_bugs" (> 0) and "complete": false with
    "left" (the jobs not run), beside "exit_code".
    """
    from eqsat_test.runners.campaign.store import STORE_NAME, Store
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
                active = campaign_running(folder)
                stored = {j["key"]: j for j in store.jobs()}
                rows = [_stored_job_row(j, active) for j in stored.values()]
                rows += [{"key": p["key"][:12], "status": "pending", "model": p["model"], "rules": p["rules"],
                          "backend": p["backend"], "device": p["device"], "seed": p["seed"], "run_dir": None}
                         for p in store.plan() if p["key"] not in stored]  # planned, never started
                _print_jobs(rows, as_json)
        sys.exit(ExitCode.OK)

    sp = load_spec(spec, {"executor": executor, "address": address, "jobs": jobs, "job_timeout": job_timeout,
                          "total_seconds": total_seconds})
    out = resolve_out(sp.path, out)
    if export_jsonl:
        if not (out / STORE_NAME).is_file():
            raise click.UsageError(f"{out}: no campaign store yet (run the campaign first)")
        with Store(out / STORE_NAME) as store:
            n = store.export_jsonl(export_jsonl)
        click.echo(f"eqsat-test: wrote {n} lines to {export_jsonl}", err=True)
        sys.exit(ExitCode.OK)
    if dry_run:
        js = make_jobs(sp)
        status: dict[str, str] = {}
        active = False
        if (out / STORE_NAME).is_file():
            active = campaign_running(out)
            with Store(out / STORE_NAME) as store:
                status = store.status_of(j["key"] for j in js)
        rows = [{"key": j["key"][:12], "status": shown_status(status.get(j["key"]), active), "model": j["model_rel"],
                 "rules": j["rule_label"], "backend": j["backend"], "device": j["device"], "seed": j["seed"],
                 "run_dir": str(out / RUNS_DIR / j["run_name"])} for j in js]
        _print_jobs(rows, as_json)
        sys.exit(ExitCode.OK)

    prev = None
    try:
        prev = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread
        pass
    try:
        summary = run_campaign(sp, out, as_json=as_json, retry_failed=retry_failed)
    except KeyboardInterrupt:
        stop = KeyboardInterrupt()
        stop.saved = (f"interrupted: every finished job is in {out / STORE_NAME}; run the campaign again to resume "
                      f"(the jobs that were running run again)")  # (the line main() prints)
        raise stop from None
    finally:
        if prev is not None:
            signal.signal(signal.SIGTERM, prev)
    left = (summary.get("run") or {}).get("left") or summary["jobs"].get("pending") or 0
    summary.update(exit_code=int(exit_code(summary)), complete=not left, left=left)
    if as_json:
        click.echo(json.dumps(summary, default=str))
    else:
        click.echo(text_summary(summary))
        if left and summary["exit_code"] == ExitCode.FOUND:
            click.echo(f"  exit code 1 (candidates found) although {left} job(s) are left: run the campaign again "
                       f"to resume")
    sys.exit(summary["exit_code"])


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def exit_code(summary: dict) -> int:
    j = summary["jobs"]
    if summary["compiler_bugs"]:
        return ExitCode.FOUND
    if summary.get("run", {}).get("left") or j.get("pending"):
        return ExitCode.INTERRUPTED
    if j.get("error") or j.get("crash"):
        return ExitCode.INTERNAL
    return ExitCode.OK


def _stored_job_row(j: dict, active: bool) -> dict:
    return {"key": j["key"][:12], "status": shown_status(j["status"], active), "model": j["model"],
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
    findings per rule family, op, backend and device; variants checked over time and jobs at once; the
    planned jobs and those left; rules that never fired."""
    from eqsat_test.runners.campaign.report import write_report
    path = write_report(folder, out, title=title)
    click.echo(str(path))

