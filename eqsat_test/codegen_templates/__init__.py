"""Jinja templates for everything eqsat-test writes as code or pages, and `render()` to fill them."""
from __future__ import annotations

from pathlib import Path

import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parent

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["pyrepr"] = repr  # a Python literal for generated code


def render(template: str, **context) -> str:
    return _env.get_template(template).render(**context)
