"""How a command that ends early says so: bad input (exit code 4) told apart without importing torch, a run whose time budget ran out before any task, and a model torch.compile cannot capture."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from eqsat_test.rewrite.rulefiles import RuleError
from eqsat_test.runners.cli.precheck import InputError
from eqsat_test.runners.records import FindingKind, RunResults

# Exceptions that mean bad input, by the module that defines them: a module that was never imported
# cannot have raised its exception, so the check imports nothing (bad input stays fast).
_BAD_INPUT = (("eqsat_test.lowering.load", "BadInput"), ("eqsat_test.runners.pipeline", "BadBundle"))


def is_bad_input(e: BaseException) -> bool:
    types = [InputError, RuleError] + [getattr(sys.modules[m], n) for m, n in _BAD_INPUT if m in sys.modules]
    return isinstance(e, tuple(types))


def budget_spent_report(model: Path, out: Path, stage: str, budget: float, seconds: float) -> dict:
    """OUT/results.json and report.json of a run whose --time-budget ran out while generating (loading,
    capturing or rewriting the model), before any task ran: nothing was tested. Returns the report."""
    import torch  # (imported by then: generation ran)
    report = {"model": str(model), "torch_version": torch.__version__, "variants": 0, "executed": 0, "sizes": None,
              "partial": True, "findings": [],
              "stats": {"time_budget": budget, "budget_spent_while": stage, "seconds": round(seconds, 3),
                        "tasks": 0, "tasks_done": 0, "tasks_not_started": None, "compiler_bugs": 0, "notes": 0}}
    out.mkdir(parents=True, exist_ok=True)
    RunResults(report=report, findings=(), raw=()).write(out)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    return report


def budget_spent_line(stage: str, budget: float, seconds: float, out: Path) -> str:
    return (f"time budget of {budget:g} s spent while {stage}, {seconds:.0f} s after the start: no task ran, "
            f"nothing was tested (exit code 2); {out / 'results.json'} says so. A larger --time-budget, or "
            f"--sizes test with a smaller --max-elements for a slow model")


def capture_crash_ending(model: Path, out: Path, error: BaseException, eo, go, as_json: bool) -> int:
    """The run of a model that eager runs and torch.compile cannot capture (runners/findings/capture.py): its
    capture-crash finding, confirmed alone, said in a few lines (or --json); returns the exit code."""
    import click

    from eqsat_test.runners.findings.capture import capture_crash  # (torch: only once a model was loaded)
    from eqsat_test.runners.judging import exit_code  # (torch)
    report, f = capture_crash(model, out, error, backend=eo.backends[0], sizes=go.sizes,
                              max_elements=go.max_elements, confirm=eo.confirm, timeout=eo.timeout)
    if as_json:
        click.echo(json.dumps(report, default=str))
    elif f.kind == FindingKind.CAPTURE_CRASH:
        click.echo(f"eqsat-test: {report['model']}  (torch {report['torch_version']})\n"
                   f"  FOUND 1 compiler-bug candidate: [capture-crash] {f.detail}\n"
                   f"  {'confirmed alone from its repro.py; ' if f.confirmed else ''}"
                   f"next: python {f.repro}   (exits 1 while the bug reproduces)\n"
                   f"  results: {out / 'results.json'}")
    else:
        click.echo(f"eqsat-test: {report['model']}: capture failed, but not alone ({f.kind}: {f.detail})\n"
                   f"  results: {out / 'results.json'}")
    return exit_code(report)
