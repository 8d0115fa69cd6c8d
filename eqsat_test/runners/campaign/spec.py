"""The campaign spec: a TOML file of models, rule sets, backends, devices, seeds and budgets, checked and resolved."""
from __future__ import annotations

import fnmatch
import glob as globmod
import os
from dataclasses import dataclass, field
from pathlib import Path

import click

from eqsat_test.rewrite.rulefiles import RuleError, rule_files
from eqsat_test.runners.protocol import absolute_backend

RUNS_DIR = "runs"
TMP_DIR = ".tmp"

_TOP_KEYS = {"name", "models", "exclude", "rule_sets", "backends", "devices", "variants", "seeds",
             "inputs", "run_args", "jobs", "budget", "executor", "address", "grad"}
_BUDGET_KEYS = {"job_timeout", "variant_timeout", "total_seconds"}


# ---------------------------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------------------------

@dataclass
class Spec:
    path: Path
    name: str
    models: list[Path]
    rule_sets: list[list[str]]  # as written; [] = the built-in library
    backends: list[str] = field(default_factory=lambda: ["inductor"])
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    variants: int = 16
    seeds: list[int] = field(default_factory=lambda: [0])
    inputs: str = "given,random,special"
    run_args: list[str] = field(default_factory=list)
    job_timeout: float = 1800.0
    variant_timeout: float = 300.0
    total_seconds: float | None = None
    jobs: int | None = None
    executor: str = "local"
    address: str | None = None
    grad: bool = False  # training mode: every job runs `eqsat-test run --grad` (its store keys differ by it)


def _load_toml(path: Path) -> dict:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError as e:
            raise click.UsageError("reading a campaign spec on Python 3.10 needs tomli: pip install tomli") from e
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise click.UsageError(f"{path}: not valid TOML: {e}") from e


def _as_list(v, what: str) -> list:
    if v is None:
        return []
    if isinstance(v, (str, int, float)):
        return [v]
    if isinstance(v, list):
        return v
    raise click.UsageError(f"campaign spec: {what} must be a list, not {type(v).__name__}")


def resolve_models(entries: list[str], base: Path, exclude: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """Model files named by `entries` (files, folders of .py files, globs), relative to `base`."""
    found: list[Path] = []
    for e in entries:
        p = Path(str(e)).expanduser()
        p = p if p.is_absolute() else base / p
        if any(c in str(e) for c in "*?["):
            hits = [Path(h) for h in sorted(globmod.glob(str(p), recursive=True))]
            hits = [h for h in hits if h.is_file() and h.suffix == ".py"]
        elif p.is_dir():
            hits = sorted(f for f in p.glob("*.py") if not f.name.startswith("_"))
        elif p.is_file():
            hits = [p]
        else:
            raise click.UsageError(f"campaign spec: models entry {e!r}: no such file or folder ({p})")
        if not hits:
            raise click.UsageError(f"campaign spec: models entry {e!r} matched no .py file")
        found.extend(h.resolve() for h in hits)
    out, seen = [], set()
    for f in found:
        rel = os.path.relpath(f, base)
        if f in seen or any(fnmatch.fnmatch(rel, x) or fnmatch.fnmatch(f.name, x) for x in exclude):
            continue
        seen.add(f)
        out.append(f)
    return out


def resolve_rule_spec(item: str, base: Path) -> tuple[str, list[Path]]:
    """One --rules spec -> (the argument to pass to `eqsat-test run`, the rule files it names)."""
    try:
        files = rule_files(item, base)
    except RuleError as e:
        raise click.UsageError(f"campaign spec: rule set item {item!r}: {e}") from None
    p = Path(str(item)).expanduser()
    p = p if p.is_absolute() else base / p
    return (str(p.resolve()) if p.exists() else str(item)), [f.resolve() for f in files]


def load_spec(path: str | Path, overrides: dict | None = None) -> Spec:
    path = Path(path).resolve()
    raw = _load_toml(path)
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise click.UsageError(f"{path}: unknown key(s) {sorted(unknown)}; known: {sorted(_TOP_KEYS)}")
    budget = raw.get("budget", {}) or {}
    if not isinstance(budget, dict) or set(budget) - _BUDGET_KEYS:
        raise click.UsageError(f"{path}: [budget] knows only {sorted(_BUDGET_KEYS)}")
    base = path.parent
    if not raw.get("models"):
        raise click.UsageError(f"{path}: `models` is required (files, folders or globs, relative to the spec)")
    models = resolve_models([str(m) for m in _as_list(raw["models"], "models")], base,
                            [str(x) for x in _as_list(raw.get("exclude"), "exclude")])
    rs_raw = raw.get("rule_sets", [[]])
    rule_sets: list[list[str]] = []
    for rs in _as_list(rs_raw, "rule_sets"):
        items = [str(x) for x in _as_list(rs, "a rule set")]
        rule_sets.append([] if items in (["default"], []) else items)
    rule_sets = rule_sets or [[]]
    for rs in rule_sets:  # validate early: a typo is a usage error, not N failing jobs
        for item in rs:
            resolve_rule_spec(item, base)
    devices = [str(d) for d in _as_list(raw.get("devices", ["cpu"]), "devices")]
    if set(devices) - {"cpu", "cuda"}:
        raise click.UsageError(f"{path}: devices must be cpu and/or cuda, not {devices}")

    def num(v, what, cast=float):
        if v is None:
            return None
        try:
            return cast(v)
        except (TypeError, ValueError) as e:
            raise click.UsageError(f"{path}: {what} must be a number, not {v!r}") from e

    spec = Spec(
        path=path, name=str(raw.get("name") or path.stem), models=models, rule_sets=rule_sets,
        backends=[absolute_backend(str(b), base) for b in _as_list(raw.get("backends", ["inductor"]), "backends")],
        devices=devices, variants=num(raw.get("variants", 16), "variants", int),
        seeds=[num(s, "seeds", int) for s in _as_list(raw.get("seeds", [0]), "seeds")],
        inputs=str(raw.get("inputs", "given,random,special")),
        run_args=[str(a) for a in _as_list(raw.get("run_args"), "run_args")],
        job_timeout=num(budget.get("job_timeout", 1800), "budget.job_timeout"),
        variant_timeout=num(budget.get("variant_timeout", 300), "budget.variant_timeout"),
        total_seconds=num(budget.get("total_seconds"), "budget.total_seconds") or None,
        jobs=num(raw.get("jobs"), "jobs", int) or None,
        executor=str(raw.get("executor", "local")), address=raw.get("address"),
    )
    for k, v in (overrides or {}).items():
        if v is not None:
            setattr(spec, k, v)
    if not isinstance(raw.get("grad", False), bool):
        raise click.UsageError(f"{path}: grad must be true or false, not {raw['grad']!r}")
    spec.grad = bool(raw.get("grad", False)) or spec.grad
    if spec.grad and "--grad" not in spec.run_args:  # the jobs' `run` command line, and so their store keys
        spec.run_args.append("--grad")
    if spec.executor not in ("local", "ray"):
        raise click.UsageError(f"executor must be local or ray, not {spec.executor!r}")
    return spec


