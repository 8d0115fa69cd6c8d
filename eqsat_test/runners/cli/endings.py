"""How a command that ends early says so: bad input (exit code 4) told apart without importing torch, and a run whose time budget ran out before any task."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from eqsat_test.rewrite.rulefiles import RuleError
from eqsat_test.runners.cli.precheck import InputError
from eqsat_test.runners.records import RESULTS_SCHEMA_VERSION

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
    (out / "results.json").write_text(json.dumps({"schema_version": RESULTS_SCHEMA_VERSION, "report": report,
                                                  "raw": []}, indent=1))
    (out / "report.json").write_text(json.dumps(report, indent=1))
    return report


def budget_spent_line(stage: str, budget: float, seconds: float, out: Path) -> str:
    return (f"time budget of {budget:g} s spent while {stage}, {seconds:.0f} s after the start: no task ran, "
            f"nothing was tested (exit code 2); {out / 'results.json'} says so. A larger --time-budget, or "
            f"--sizes test with a smaller --max-elements for a slow model")
