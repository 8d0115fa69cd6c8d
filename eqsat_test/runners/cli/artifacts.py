"""`eqsat-test artifacts`: a finding's debug artifacts on demand (Inductor's output code, the minifier, the bisector), and the run's hint or collection after its summary.

A run never collects them on the way to its verdicts or its summary: by default it prints one line saying
how (`hint`); `--artifacts` collects them after the summary, in the same process (`after_summary`). Either
way the work is runners/findings/artifacts.py's `collect_all`, each step in its own subprocess; what it
made is in each finding's folder and its meta.json (`debug_artifacts`)."""
from __future__ import annotations

from pathlib import Path

import click

from eqsat_test.runners.findings.artifacts import ArtifactOptions, collect_all
from eqsat_test.runners.findings.meta import read_meta
from eqsat_test.runners.records import BUG_KINDS, Finding


def _log(msg: str) -> None:
    click.echo(f"eqsat-test: {msg}", err=True)


def finding_in(folder: Path) -> Finding:
    """The finding a folder's meta.json holds (with its minimized program, where the folder has one)."""
    meta = folder / "meta.json"
    if not meta.is_file() or not (folder / "repro.py").is_file():
        raise click.UsageError(f"{folder}: not a finding folder (no meta.json and repro.py)")
    f = read_meta(folder).finding
    if (folder / "minimized.py").is_file():
        f = f.with_(minimized_file=str(folder / "minimized.py"))
    return f.with_(id=folder.name)


def findings_of(path: Path) -> tuple[Path, list[Finding]]:
    """(the run folder, its findings) for a finding folder (that one) or a run folder (its compiler-bug and
    eager-bug candidates, as its results.json lists them)."""
    if (path / "meta.json").is_file():
        return path.parent.parent, [finding_in(path)]
    if not (path / "findings").is_dir():
        raise click.UsageError(f"{path}: neither a finding folder (OUT/findings/ID) nor a run folder (OUT)")
    folders = sorted(d for d in (path / "findings").iterdir() if (d / "meta.json").is_file())
    found = [finding_in(d) for d in folders]
    return path, [f for f in found if f.kind in BUG_KINDS]


def hint(report: dict, out: Path) -> str | None:
    """The line a run prints after its summary where it has findings and did not collect their artifacts."""
    ids = [Path(f["repro"]).parent.name for f in report.get("findings", [])  # (the report's dicts)
           if f.get("repro") and f.get("kind") in BUG_KINDS]
    if not ids:
        return None
    return (f"debug artifacts (Inductor's output code, the minifier, the bisector) on demand: eqsat-test artifacts "
            f"{out / 'findings' / ids[0]}   (or {out} for up to 4 findings; --artifacts collects them in the run)")


def after_summary(report: dict, out: Path, opts: ArtifactOptions | None) -> None:
    """After a run's summary: its findings' artifacts collected (`--artifacts`), else the hint line."""
    if opts is None:
        line = hint(report, out)
        if line:
            _log(line)
        return
    run, found = findings_of(out)
    if found:
        _collect(run, found, opts)


def _collect(run: Path, found: list[Finding], opts: ArtifactOptions) -> None:
    collected, stats = collect_all(found, run, opts, log=_log)
    for f in collected:
        art = f.debug_artifacts or {}
        made = ", ".join(art.get("files") or []) or art.get("skipped") or art.get("error") or "nothing"
        _log(f"{f.id}: {made}")
    _log(f"artifacts of {stats['findings']} finding(s) in {stats['seconds']:.0f} s"
         + (f" ({stats['skipped']} more not collected: --max)" if stats["skipped"] else ""))


@click.command(name="artifacts")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--max", "max_findings", default=4, show_default=True, type=click.IntRange(min=1),
              help="Findings that get the debug rerun, per run folder.")
@click.option("--timeout", default=180.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per debug step (rerun, minifier, bisector).")
@click.option("--bisect", type=click.Choice(["accuracy", "all", "none"]), default="accuracy", show_default=True,
              help="Which findings get the compiler bisector (accuracy: silent wrong outputs).")
@click.option("--no-minifier", is_flag=True, help="Skip the after-AOT minifier.")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Findings at once.")
def artifacts_cmd(paths, max_findings, timeout, bisect, no_minifier, jobs):
    """Debug artifacts of findings: OUT/findings/ID (one finding) or OUT (a run's findings).

    \b
    Per finding, each step in its own subprocess: a debug rerun of repro.py keeping Inductor's output code
    and FX graphs (output_code.py, fx_graph_*.py, compile_log.txt), the after-AOT minifier
    (minifier_repro.py) and the compiler bisector (bisect.txt); meta.json records what ran."""
    opts = ArtifactOptions(max_findings=max_findings, timeout=timeout, minifier=not no_minifier,
                           minifier_timeout=timeout, bisect=bisect, bisect_timeout=timeout, jobs=jobs)
    for p in paths:
        run, found = findings_of(p)
        if not found:
            _log(f"{p}: no compiler-bug candidates: nothing to collect")
            continue
        _collect(run, found, opts)
