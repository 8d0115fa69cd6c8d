#!/usr/bin/env bash
# Set up (first time only), lint and type-check (ruff check, mypy; configured in pyproject.toml) and run the
# test suite. Extra arguments go to pytest (`-n 0`: one process).
# The tests run in parallel (pytest-xdist), one worker per core, at most 4: most tests run one
# process at a time (a CLI run, a rule check); the tests of a module that share one expensive
# fixture stay on one worker (tests/conftest.py, pytest_xdist_make_scheduler).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cores=$(.venv/bin/python -c 'import os; print(len(os.sched_getaffinity(0)))' 2>/dev/null || echo 1)
workers=$(( cores < 4 ? cores : 4 ))
.venv/bin/ruff check .
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -m "not gpu" -n "$workers" --dist loadgroup "$@"
