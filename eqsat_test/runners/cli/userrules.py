"""The quick check of the user's own rule files at load: a rule whose claimed numerics class fails it is left out of the run (unless --allow-unsound-rules), and said so in full."""
from __future__ import annotations

from pathlib import Path

from eqsat_test.rewrite.rulecheck import check_rules  # (torch: main.py imports this module only when rules are checked)
from eqsat_test.rewrite.ruledsl import load_rules

USER_RULE_SAMPLES = 40  # samples per rule: a quick `rules check`, seconds per file
COUNTEREXAMPLE_LINES = 12  # lines of a failing rule's counterexample shown at load (whole lines, never cut)


def check_user_rules(specs, allow_unsound: bool, log) -> dict[str, str]:
    """Rule files the user names (not built-in sets) are checked before use. Returns {rule name: why}
    for the rules to leave out: each that fails its check, unless `allow_unsound` (then they are used,
    and their variants' unsound-rewrite notes name them; no false compiler bug comes of it, since a
    variant is judged against its own eager run)."""
    user = [s for s in specs if Path(s).exists()]
    if not user:
        return {}
    left_out: dict[str, str] = {}
    for r in check_rules(load_rules(user), samples=USER_RULE_SAMPLES):
        if r.ok:
            continue
        # whole lines, a long one split at its "; " parts: never cut mid-line
        lines = [part.strip() for ln in str(r.counterexample or "counterexample found").strip().splitlines()
                 for part in ln.split("; ") if part.strip()]
        shown = lines[:COUNTEREXAMPLE_LINES] + ([f"... ({len(lines) - COUNTEREXAMPLE_LINES} more lines: "
                                                 f"`eqsat-test rules check {' '.join(user)}`)"]
                                                if len(lines) > COUNTEREXAMPLE_LINES else [])
        what = "used anyway (--allow-unsound-rules)" if allow_unsound else \
            "left out of this run (--allow-unsound-rules uses it anyway)"
        log(f"WARNING: rule {r.rule} claims {r.claimed} but fails a quick check; {what}:")
        for ln in shown:
            log(f"    {ln}")
        if not allow_unsound:
            left_out[r.rule] = f"claims {r.claimed}, fails its check: {lines[-1]}"
    return left_out
