"""Rule scaffolding (`eqsat-test rules new NAME`): writes a rule file with one example rule and its test, from codegen_templates/rule.py.j2."""
from __future__ import annotations

import keyword
from pathlib import Path

import jinja2

from eqsat_test.rewrite.ruledsl import FAMILIES, RuleError

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "codegen_templates"
TEMPLATE = "rule.py.j2"


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(name: str, family: str, part: str) -> str:
    """The text of the rule file (`part="rule"`) or of its test (`part="test"`)."""
    return _environment().get_template(TEMPLATE).render(name=name, family=family, part=part)


def new_rule(name: str, dest_dir: str | Path, family: str = "misc") -> list[Path]:
    """Write `<dest_dir>/<name>.py` (one example rule, with editing notes) and
    `<dest_dir>/test_<name>.py` (asserts every rule of the file passes the checker).
    Refuses to overwrite either file; returns the paths written."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise RuleError(f"rule name {name!r} is not a valid Python identifier "
                        "(use snake_case letters, digits and underscores, not starting with a digit)")
    if name.startswith("test_"):
        raise RuleError(f"rule name {name!r} must not start with 'test_' (pytest would collect it)")
    if family not in FAMILIES:
        raise RuleError(f"unknown family {family!r}; choose one of: {', '.join(FAMILIES)}")
    dest = Path(dest_dir)
    rule_path = dest / f"{name}.py"
    test_path = dest / f"test_{name}.py"
    existing = [p for p in (rule_path, test_path) if p.exists()]
    if existing:
        raise RuleError("refusing to overwrite existing file(s): "
                        + ", ".join(str(p) for p in existing)
                        + " — choose another name or remove them first")
    texts = {rule_path: render(name, family, "rule"), test_path: render(name, family, "test")}
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for path, text in texts.items():
        with open(path, "x", encoding="utf-8") as f:  # "x": never clobber a file made meanwhile
            f.write(text)
        written.append(path)
    return written
