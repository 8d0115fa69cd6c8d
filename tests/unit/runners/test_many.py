"""`eqsat-test run A.py B.py`: several model files in one process on the same warm workers (runners/cli/many.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from eqsat_test.runners.cli.many import run_many, worst
from eqsat_test.runners.exec import pool


def test_the_exit_code_is_the_worst_of_the_models():
    assert worst([0, 1, 0]) == 1
    assert worst([1, 2]) == 2
    assert worst([1, 4, 2]) == 4
    assert worst([4, 3, 0]) == 3
    assert worst([0, 0]) == 0


def test_one_models_failure_is_said_and_the_next_one_runs(tmp_path):
    from eqsat_test.runners.cli.precheck import InputError
    seen, lines = [], []

    def one(model: Path, out: Path) -> int:
        seen.append(model.name)
        if model.name == "bad.py":
            raise InputError("bad.py: no nn.Module")
        if model.name == "ours.py":
            raise RuntimeError("our bug")
        return 1 if model.name == "found.py" else 0

    runs = [(tmp_path / n, tmp_path / "out" / n) for n in ("bad.py", "clean.py", "ours.py", "found.py")]
    assert run_many(runs, one, lines.append) == 3
    assert seen == ["bad.py", "clean.py", "ours.py", "found.py"]
    assert any("bad.py: error: InputError" in s for s in lines) and any("internal error: RuntimeError" in s for s in lines)
    assert lines[-1] == "4 models: bad.py exit 4, clean.py exit 0, ours.py exit 3, found.py exit 1"
    with pytest.raises(KeyboardInterrupt):  # an interruption stops the lot
        run_many(runs, lambda m, o: (_ for _ in ()).throw(KeyboardInterrupt()), lines.append)


def test_inside_keep_warm_a_runs_end_leaves_its_workers_to_the_next_run():
    class Live:
        def __init__(self):
            self.killed = False
            self.readers = []

        def kill(self):
            self.killed = True

    w = Live()
    with pool.keep_warm():
        pool._idle.append(w)
        pool.retire()  # a run's end (execute_bundle): the next run takes it
        assert pool.idle_workers() == 1 and not w.killed
    assert pool.idle_workers() == 0 and w.killed  # the last run's end: ended
