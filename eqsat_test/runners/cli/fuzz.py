"""The `eqsat-test fuzz` command: hunt mode, generated programs judged as a campaign for N minutes (runners/campaign/hunt.py)."""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import click

from eqsat_test.hunt.sources import model_files
from eqsat_test.runners.campaign.hunt import HuntOptions, hunt_text, run_hunt
from eqsat_test.runners.campaign.hunt_programs import WINDOW_SHARE
from eqsat_test.runners.records import ExitCode


@click.command(name="fuzz")
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), required=True,
              help="Start no program after this many minutes (the running ones finish).")
@click.option("--device", "-d", "devices", multiple=True, type=click.Choice(["cpu", "cuda"]),
              help="cpu (default) and/or cuda (repeatable): each program is judged on each.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes judging programs at once (default: one per core).")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=Path("eqsat-hunt"),
              show_default=True, help="The hunt's folder: programs, store, runs, draft reports. Run again to go on.")
@click.option("--seed", default=0, show_default=True, help="The hunt's seed: program i is generator seed "
              "SEED * 1000000 + i.")
@click.option("--variants", "-n", default=4, show_default=True, type=click.IntRange(min=1),
              help="Variants of each program the e-graph gives.")
@click.option("--sweep-every", default=8, show_default=True, type=click.IntRange(min=0),
              help="One program in this many also gets the dtype and size sweeps (0: none).")
@click.option("--no-inplace", is_flag=True, help="Generate no in-place ops and no writes to inputs.")
@click.option("--rules", "-r", "rules", multiple=True, help="Rule set name, file or folder (repeatable; default: the library).")
@click.option("--job-timeout", default=900.0, show_default=True, help="Seconds per program's job (it is killed after).")
@click.option("--programs-per-job", default=8, show_default=True, type=click.IntRange(min=1),
              help="Programs judged one after another by one process (its start paid once); each is still its own "
              "job with its own verdicts, folder and timeout, and what a crashed process left is run again.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local process pool, or Ray tasks in waves (pip install 'eqsat-test[ray]').")
@click.option("--address", default=None, help="Ray cluster address (default: $RAY_ADDRESS, else a local one).")
@click.option("--windows-from", "windows_from", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="A model file, or a folder of them (repeatable): half the programs are windows of 3 to 12 ops cut "
              "from their captured graphs, at their real shapes and dtypes (docs/hunt.md).")
@click.option("--windows-only", is_flag=True, help="With --windows-from: every program is a window.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout (programs, variants, root_causes, "
              "ledger_matches, internal_errors, ...); progress on stderr.")
def fuzz_cmd(minutes, devices, jobs, out, seed, variants, sweep_every, no_inplace, rules, job_timeout, programs_per_job,
             executor, address, windows_from, windows_only, as_json):
    """Hunt: generate random valid programs, multiply each with the e-graph, judge them all, for N minutes.

    \b
    Each program is a model file under OUT/programs/ (its generator version and seed inside it and in the
    store), judged by `eqsat-test run` as one job of a campaign (up to --programs-per-job of them in one
    process): findings are clustered over the whole hunt,
    matched to the ledger, and each root cause not in the ledger gets a draft upstream report,
    OUT/issues/NN-.../ISSUE.md, beside its minimized repro. `eqsat-test report OUT` writes the HTML report.
    Exit codes as `campaign`'s: 1 when candidates are in the store.
    """
    if windows_only and not windows_from:
        raise click.UsageError("--windows-only needs --windows-from PATH")
    files = tuple(model_files(windows_from)) if windows_from else ()
    if windows_from and not files:
        raise click.UsageError("--windows-from: no model file (*.py) in " + ", ".join(map(str, windows_from)))
    opts = HuntOptions(minutes=minutes, devices=tuple(devices) or ("cpu",), jobs=jobs, seed=seed, variants=variants,
                       sweep_every=sweep_every, inplace=not no_inplace, rules=tuple(rules), job_timeout=job_timeout,
                       variant_timeout=min(120.0, job_timeout / 4), executor=executor, address=address,
                       programs_per_job=programs_per_job,
                       windows_from=files, windows_share=(1.0 if windows_only else WINDOW_SHARE) if files else 0.0)
    prev = None
    try:
        prev = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread
        pass
    try:
        summary = run_hunt(opts, out, as_json=as_json)
    except KeyboardInterrupt:
        stop = KeyboardInterrupt()
        stop.saved = f"interrupted: every judged program is in {out}; run the same command again to go on"  # type: ignore[attr-defined]
        raise stop from None
    finally:
        if prev is not None:
            signal.signal(signal.SIGTERM, prev)
    code = ExitCode.FOUND if summary["candidates"] else ExitCode.INTERNAL if summary["internal_errors"] and \
        not summary["judged"] else ExitCode.OK
    summary["exit_code"] = int(code)
    click.echo(json.dumps(summary, default=str) if as_json else hunt_text(summary))
    sys.exit(code)


def _sigterm(signum, frame):
    raise KeyboardInterrupt
