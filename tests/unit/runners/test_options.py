"""The command line's options parsed once into one frozen record (runners/cli/options.py), and handed down to the pipeline as they are."""
from __future__ import annotations

import dataclasses
import time

import click
import pytest
from conftest import REPO

from eqsat_test.runners.cli import main as M
from eqsat_test.runners.cli.options import RunOptions, parse_options

MODEL = REPO / "examples" / "mlp.py"
RUN_ARGS = ["-n", "5", "--seed", "3", "--iterations", "4", "--mode", "uniform", "--sizes", "given", "--grad",
            "--timeout", "60", "--time-budget", "100", "--no-confirm", "-j", "2", "--batch", "4",
            "--inputs", "given,random", "--minimize-checks", "5", "--minimize-seconds", "30", "--no-sweep", "--perf",
            "--artifacts", "--artifacts-max", "2", "--json", "--guide-memory", "memory.json"]


def _params(command: str, *args: str) -> dict:
    """What click hands the command for `eqsat-test COMMAND ARGS`."""
    return M.cli.commands[command].make_context(command, list(args)).params


def test_run_arguments_to_one_record():
    options = parse_options(_params("run", str(MODEL), *RUN_ARGS))
    eo, go = options.execution, options.generation
    assert eo is not None and go is not None
    assert (eo.timeout, eo.time_budget, eo.deadline, eo.confirm, eo.jobs, eo.batch) == (60, 100, None, False, 2, 4)
    assert (eo.seed, eo.input_kinds, eo.grad, eo.sweep, eo.perf) == (3, ("given", "random"), True, None, True)
    assert (eo.minimize, eo.minimize_checks, eo.minimize_seconds) == (True, 5, 30)
    assert eo.artifacts is not None and (eo.artifacts.max_findings, eo.artifacts.jobs) == (2, 2)
    assert (eo.backends, eo.devices, eo.coverage) == (("inductor",), ("cpu",), False)
    assert (go.variants, go.seed, go.modes, go.sizes, go.train, go.deadline) == (5, 3, ("uniform",), "given", True, None)
    assert go.budget.iterations == 4
    assert (options.as_json, options.guide_memory) == (True, "memory.json")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.as_json = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        eo.timeout = 1.0  # type: ignore[misc]


def test_the_defaults_and_the_deadline_rule():
    options = parse_options(_params("run", str(MODEL)))
    eo = options.execution
    assert eo is not None and options.generation is not None
    assert (eo.time_budget, eo.confirm, eo.minimize, eo.batch, eo.artifacts) == (None, True, True, 0, None)
    assert eo.sweep is not None and options.generation.modes == ("uniform", "near-original")
    assert options.started(50.0) == options  # no budget: no end
    budgeted = parse_options(_params("run", str(MODEL), "--time-budget", "100")).started(50.0)
    assert budgeted.execution.deadline == budgeted.generation.deadline == 150.0
    assert budgeted.execution.started(80.0) is budgeted.execution  # an end set already stands


def test_exec_and_generate_parse_their_own_half(tmp_path):
    options = parse_options(_params("exec", str(tmp_path), "--seed", "7", "--backend", "eager", "-j", "1"))
    assert options.generation is None and options.execution is not None
    assert (options.execution.seed, options.execution.backends) == (7, ("eager",))
    options = parse_options(_params("generate", str(MODEL), "-n", "2", "--grad"))
    assert options.execution is None and options.generation is not None
    assert (options.generation.variants, options.generation.train) == (2, True)
    with pytest.raises(click.UsageError, match="needs `eqsat-test run`"):
        parse_options(_params("generate", str(MODEL), "--mode", "guided"))


@pytest.mark.parametrize("args, says", [(["--batch", "0"], "--batch"), (["--inputs", "nonsense"], "--inputs"),
                                        (["--minimize-seconds", "0"], "--minimize-seconds"),
                                        (["--dtypes", "float7"], "--dtypes")])
def test_a_bad_option_is_a_usage_error(args, says):
    with pytest.raises(click.UsageError, match=says):
        parse_options(_params("run", str(MODEL), *args))


class _Handed(Exception):
    """Raised by the stand-ins below, with what they were handed."""


def test_the_record_reaches_generation_and_execution_unchanged(tmp_path, monkeypatch):
    import eqsat_test.rewrite.generate as G
    import eqsat_test.runners.pipeline as P
    handed: dict = {}

    def generate(model, out, go, **kw):
        handed["generate"] = go
        return object()  # (no guide: the manifest is not read before execution)

    def execute_bundle(bundle, out, eo, log=None):
        handed["execute"] = eo
        raise _Handed
    monkeypatch.setattr(G, "generate", generate)
    monkeypatch.setattr(P, "execute_bundle", execute_bundle)
    parsed = parse_options(_params("run", str(MODEL), *RUN_ARGS))
    t0 = time.monotonic()
    with pytest.raises(_Handed):
        M.cli.main(args=["run", str(MODEL), *RUN_ARGS, "--out", str(tmp_path / "out")], standalone_mode=False)
    eo, go = handed["execute"], handed["generate"]
    assert t0 + 100 <= eo.deadline <= time.monotonic() + 100 and go.deadline == eo.deadline  # the budget's end
    assert dataclasses.replace(eo, deadline=None) == parsed.execution  # and nothing else
    assert dataclasses.replace(go, deadline=None) == parsed.generation

    bundle = tmp_path / "bundle"  # (a folder that passes the bundle check)
    bundle.mkdir()
    (bundle / "manifest.json").write_text("{}")
    with pytest.raises(_Handed):  # `exec`: the record as parsed
        M.cli.main(args=["exec", str(bundle), "-j", "2", "--out", str(tmp_path / "x")], standalone_mode=False)
    assert handed["execute"] == parse_options(_params("exec", str(bundle), "-j", "2")).execution


def test_a_record_with_no_halves_is_what_parse_gives_for_no_options():
    assert parse_options({}) == RunOptions()
