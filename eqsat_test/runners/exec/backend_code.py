"""How generated scripts name a torch.compile backend: a registered name as a string, a FILE.py:FN callable imported by its path, a module:FN one by import."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from eqsat_test.codegen_templates import render
from eqsat_test.runners.protocol import compile_options, is_custom_backend

BACKEND_CALL = "_eqsat_backend()"  # the expression that names a custom backend in a generated script


def backend_copy_name(spec: str) -> str:
    """The name of the copy of a FILE.py:FN backend's file kept beside a finding's scripts."""
    return "backend_" + Path(spec.rpartition(":")[0]).name


def backend_code(spec: str) -> tuple[str, str]:
    """(prelude, expression) for `torch.compile(..., backend=EXPRESSION)` in a standalone script: a
    registered backend is its name as a string literal and needs no prelude; a callable (`FILE.py:FN`,
    `module:FN`) is `_eqsat_backend()`, which the prelude (module-level source) defines."""
    if not is_custom_backend(spec):
        name, _ = compile_options(spec)
        return "", json.dumps(name)
    where, _, fn = spec.rpartition(":")
    if where.endswith(".py"):
        prelude = render("backend_loader.py.j2", path=os.path.abspath(where), copy=backend_copy_name(spec), fn=fn,
                         module=None)
    else:
        prelude = render("backend_loader.py.j2", path=None, copy=None, fn=fn, module=where)
    return prelude, BACKEND_CALL


def script_options(spec: str) -> tuple[dict, dict]:
    """(torch.compile keyword options, Inductor config overrides) of a backend spec, as plain values."""
    _, opts = compile_options(spec) if not is_custom_backend(spec) else (None, {})
    opts = dict(opts)
    return opts, opts.pop("options", {})


def copy_backend_file(spec: str, folder: Path) -> None:
    """Keep a copy of a FILE.py:FN backend's file in `folder`: scripts there import it when the original is gone."""
    where = spec.rpartition(":")[0]
    if is_custom_backend(spec) and where.endswith(".py") and os.path.isfile(where):
        shutil.copy(where, Path(folder) / backend_copy_name(spec))
