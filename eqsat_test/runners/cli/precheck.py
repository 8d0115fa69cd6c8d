"""Checks of a command's input that need no torch (the model file, the output folder), made before any heavy import and creating nothing."""
from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path

# The model file conventions, as lowering/load.py states them (tests/unit/runners/test_precheck.py keeps
# the two texts equal; this module may not import lowering/, which imports torch).
LOOKED_FOR = (
    "looked for `class Model(nn.Module)` + `get_inputs()` (KernelBench), "
    "`class Repro(nn.Module)` + module-level `args` (minifier), or a module-level `model` "
    "(nn.Module) + `example_inputs` / `get_inputs()`"
)
CONVENTIONS = ({"Model", "get_inputs"}, {"Repro", "args"}, {"model", "example_inputs"}, {"model", "get_inputs"})
# Calls through which a module can bind names that its text does not show.
_DYNAMIC = {"globals", "vars", "exec", "eval", "setattr", "__import__", "import_module", "locals"}


class InputError(Exception):
    """Bad input found before any work; the message is one line saying why (exit code 4)."""


def check_model_file(path: Path) -> None:
    """The model file exists, is Python, parses, and can define one of the conventions' names.
    A file whose names cannot be read from its text (a star import, globals(), exec) passes: loading decides."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file() or path.suffix != ".py":
        raise InputError(f"{path}: not a Python file")
    try:
        source = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot be read: {e.strerror or e}") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise InputError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except ValueError as e:  # null bytes
        raise InputError(f"{path}: not Python source: {e}") from None
    names = module_names(tree)
    if names is not None and not any(c <= names for c in CONVENTIONS):
        raise InputError(f"{path}: no model found: {LOOKED_FOR}")


def module_names(tree: ast.Module) -> set[str] | None:
    """The names the module's top level can bind (None: some may be bound in ways its text does not show)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
            if called in _DYNAMIC:
                return None
        if isinstance(node, ast.Global):  # a function may bind module names
            names.update(node.names)
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    _bind_block(tree.body, names)
    return names


def _bind_block(body: list, names: set[str]) -> None:
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(st.name)
            continue  # their bodies bind their own names
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            for a in st.names:
                names.add(a.asname or a.name.split(".")[0])
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                _bind_target(t, names)
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            _bind_target(st.target, names)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                if item.optional_vars is not None:
                    _bind_target(item.optional_vars, names)
        elif type(st).__name__ == "Match":
            _bind_all(st, names)
        for h in getattr(st, "handlers", None) or []:  # try / try*
            if h.name:
                names.add(h.name)
            _bind_block(h.body, names)
        for field in ("body", "orelse", "finalbody"):
            _bind_block(getattr(st, field, None) or [], names)


def _bind_all(node: ast.AST, names: set[str]) -> None:
    """Every name a (rare) statement could bind, generously."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        for attr in ("name", "rest"):
            v = getattr(n, attr, None)
            if isinstance(v, str):
                names.add(v)


def _bind_target(t: ast.AST, names: set[str]) -> None:
    if isinstance(t, ast.Name):
        names.add(t.id)
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _bind_target(e, names)
    elif isinstance(t, ast.Starred):
        _bind_target(t.value, names)


def check_bundle(bundle: Path) -> None:
    """A bundle folder has its manifest (its contents are checked when it is read)."""
    if not (Path(bundle) / "manifest.json").is_file():
        raise InputError(f"{bundle}: not a bundle (no manifest.json)")


def check_out_dir(out: Path, option: str = "--out") -> None:
    """`out` is a folder that exists and takes files, or one that can be created: tried with a
    temporary file or folder, removed at once, so that a refused run leaves nothing behind."""
    out = Path(os.path.abspath(out))
    if out.exists():
        if not out.is_dir():
            raise InputError(f"{option} {out}: exists and is not a folder")
        try:
            fd, probe = tempfile.mkstemp(dir=out, prefix=".eqsat-probe-")
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise InputError(f"{option} {out}: cannot write there: {e.strerror or e}") from None
        return
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{option} {out}: {parent} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=".eqsat-probe-"))
    except OSError as e:
        raise InputError(f"{option} {out}: cannot create it in {parent}: {e.strerror or e}") from None
