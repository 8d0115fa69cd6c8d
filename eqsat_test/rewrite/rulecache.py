"""The compiled-rule cache: the user's cache file (one entry per rule and torch version), its lock, and the compiled library shipped with the package.

Imports no torch itself (a campaign asks whether a rule set is in the cache without it); the
functions that need the torch version import it.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eqsat_test.rewrite.ruledsl import Rule

CACHE_VERSION = 8  # bump when compiled rules change shape or meaning: every entry's key changes with it


def cache_dir() -> Path:
    root = os.environ.get("EQSAT_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "eqsat-test")
    return Path(root)


def rule_key(rule: Rule) -> str:
    import torch  # (imported by then: rules are torch programs)
    h = hashlib.sha256()
    h.update(f"{CACHE_VERSION}|{torch.__version__}|{rule.name}|{rule.family}|{rule.numerics}|"
             f"{rule.bidirectional}|{rule.tags}|{rule.params!r}|{rule.source_hash()}".encode())
    return h.hexdigest()[:24]


PREBUILT_DIR = Path(__file__).resolve().parent / "prebuilt"


def prebuilt_file(torch_version: str | None = None) -> Path:
    """The compiled built-in library shipped with the package for one torch version
    (scripts/build_rule_cache.py writes it): a fresh machine's first run reads it instead of
    compiling ~1,400 rules (minutes on 2 cores). Its entries have the same keys as the cache's."""
    if torch_version is None:
        import torch  # (imported by then: rules are torch programs)
        torch_version = torch.__version__
    tv = torch_version.replace("/", "_")
    return PREBUILT_DIR / f"compiled-rules-{CACHE_VERSION}-torch-{tv}.json.gz"


def read_prebuilt(torch_version: str | None = None) -> dict:
    """The shipped entries ({} without a file for this torch, or with EQSAT_TEST_NO_PREBUILT=1 set: every
    rule the user's cache lacks is then compiled here, as benchmarks/first_verdict.py measures)."""
    import gzip  # (standard library; only where the cache lacks rules)
    if os.environ.get("EQSAT_TEST_NO_PREBUILT", "") not in ("", "0"):
        return {}
    p = prebuilt_file(torch_version)
    try:
        return json.loads(gzip.decompress(p.read_bytes())) if p.is_file() else {}
    except (OSError, ValueError):
        return {}


def read_cache(cache_file: Path) -> dict:
    try:
        return json.loads(cache_file.read_text()) if cache_file.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return {}


def lock_cache(cache_file: Path) -> int | None:
    """An exclusive lock on the cache while many rules it lacks are compiled (freed by closing
    the returned descriptor): processes that start together on a cold cache (a campaign's jobs,
    tests run in parallel) compile a rule library once; the others wait, then read it."""
    try:
        import fcntl  # (POSIX only: elsewhere each process compiles what it lacks)
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(cache_file.with_name(cache_file.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd
