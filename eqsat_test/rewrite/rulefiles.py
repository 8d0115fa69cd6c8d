"""Rule files by name: a .py file, a folder of them, or a built-in rule set (torch-free, so campaigns resolve specs cheaply)."""
from __future__ import annotations

from pathlib import Path

BUILTIN_RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
ALL_BUILTIN = ("all", "default")


class RuleError(ValueError):
    """A rule file or rule definition that cannot be used; the message says why (exit code 4)."""


def rule_files(spec: str | Path, base: Path | None = None) -> list[Path]:
    """Rule files named by `spec`: a path to a .py file or a folder of them (relative to `base`,
    default the working folder), or the name of a built-in rule set (a file stem in rules/, or
    "all"/"default" for every built-in file). Files starting with `_` or `test_` are not rules."""
    p = Path(spec).expanduser()
    if base is not None and not p.is_absolute():
        p = base / p
    if p.is_dir():
        return sorted(f for f in p.glob("*.py") if not f.name.startswith(("_", "test_")))
    if p.is_file():
        return [p]
    s = str(spec)
    if s in ALL_BUILTIN:
        return rule_files(BUILTIN_RULES_DIR)
    builtin = BUILTIN_RULES_DIR / f"{s}.py"
    if builtin.is_file():
        return [builtin]
    names = ", ".join(f.stem for f in rule_files(BUILTIN_RULES_DIR))
    raise RuleError(f"no rule file, folder or built-in rule set named {s!r} (built-in: {names})")
