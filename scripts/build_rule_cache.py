"""Write the compiled built-in rule library for this torch version into the package (rewrite/prebuilt/), so that a fresh machine's first run reads it instead of compiling it.

Run it after changing rules, the rule compiler, or the pinned torch version:
    .venv/bin/python scripts/build_rule_cache.py            # reuses the user's cache for rules compiled before
    .venv/bin/python scripts/build_rule_cache.py --fresh    # compiles every rule again (minutes)
It prints how many rules it wrote and how many of the library's rules the file held before.
"""
from __future__ import annotations

import argparse
import gzip
import json
import time

import torch

from eqsat_test.rewrite.compile_rules import compile_rules
from eqsat_test.rewrite.rulecache import (
    CACHE_VERSION,
    PREBUILT_DIR,
    cache_dir,
    prebuilt_file,
    read_cache,
    read_prebuilt,
    rule_key,
)
from eqsat_test.rewrite.ruledsl import load_rules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fresh", action="store_true", help="compile every rule again instead of reading the user's cache")
    a = ap.parse_args()
    rules = load_rules(None)
    keys = [rule_key(r) for r in rules]
    before = read_prebuilt()
    t0 = time.monotonic()
    if a.fresh:
        compiled, errors = compile_rules(rules, use_cache=False, log=print)
        by_key: dict[str, list] = {}
        for c in compiled:  # a rule's rewrites (forward, backward) in order, as the cache keeps them
            by_key.setdefault(c.name, []).append(c.to_json())
        entries = {k: by_key[r.name] for k, r in zip(keys, rules) if r.name in by_key}
    else:
        compiled, errors = compile_rules(rules, log=print)
        cache = read_cache(cache_dir() / f"compiled-rules-{CACHE_VERSION}.json")
        entries = {k: cache[k] for k in keys if k in cache}
    PREBUILT_DIR.mkdir(parents=True, exist_ok=True)
    for old in PREBUILT_DIR.glob(f"compiled-rules-*-torch-{torch.__version__}.json.gz"):
        old.unlink()  # an older cache version's file for this torch
    out = prebuilt_file()
    data = json.dumps(dict(sorted(entries.items())), sort_keys=True, separators=(",", ":")).encode()
    out.write_bytes(gzip.compress(data, mtime=0))
    print(f"wrote {out}: {len(entries)} of {len(rules)} rules ({len(errors)} with errors, not shipped), "
          f"{out.stat().st_size / 1024:.0f} KiB, in {time.monotonic() - t0:.0f} s; the file held "
          f"{sum(1 for k in keys if k in before)} of them before")


if __name__ == "__main__":
    main()
