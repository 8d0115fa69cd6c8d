"""Execution: workers, the oracle, checks, findings, campaigns and the CLI (torch only, never egglog)."""
from eqsat_test import REPO_ROOT

__all__ = ["REPO_ROOT"]
