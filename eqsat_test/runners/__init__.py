"""Execution: workers, the oracle, checks, findings, campaigns and the CLI (torch only, never egglog)."""
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # the checkout: workers and jobs get it on PYTHONPATH
