"""Load a model file (KernelBench, minifier or `model` + inputs convention) into a module and inputs."""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch


class BadInput(Exception):
    """The user's input cannot be used; the message is one line saying why (exit code 4)."""


LOOKED_FOR = (
    "looked for `class Model(nn.Module)` + `get_inputs()` (KernelBench), "
    "`class Repro(nn.Module)` + module-level `args` (minifier), or a module-level `model` "
    "(nn.Module) + `example_inputs` / `get_inputs()`"
)


@dataclass(frozen=True)
class LoadedModel:
    path: str
    convention: str  # "kernelbench" | "minifier" | "instance"
    module: torch.nn.Module
    inputs: tuple
    source_sha: str


def _import_file(path: Path):
    name = "eqsat_model_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BadInput(f"{path}: cannot be imported as a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as e:
        raise BadInput(f"{path}:{e.lineno}: syntax error: {e.msg}") from e
    except Exception as e:
        raise BadInput(f"{path}: raised while being imported: {_one_line(e)}") from e
    return mod


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    where = ""
    tb = traceback.extract_tb(e.__traceback__)
    if tb:
        where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})"
    return f"{type(e).__name__}: {msg[0] if msg else ''}{where}"


def _call(path: Path, what: str, fn, *a):
    try:
        return fn(*a)
    except Exception as e:
        raise BadInput(f"{path}: {what} raised {_one_line(e)}") from e


def _as_inputs(path: Path, what: str, value) -> tuple:
    if isinstance(value, torch.Tensor):
        value = (value,)
    if not isinstance(value, (list, tuple)):
        raise BadInput(f"{path}: {what} must be a list or tuple of inputs, got {type(value).__name__}")
    if len(value) == 0:
        raise BadInput(f"{path}: {what} is empty: the model needs at least one input")
    for i, v in enumerate(value):
        if not isinstance(v, (torch.Tensor, int, float, bool)) and v is not None:
            raise BadInput(f"{path}: {what}[{i}] is a {type(v).__name__}; inputs must be tensors "
                           "or Python numbers")
    if not any(isinstance(v, torch.Tensor) for v in value):
        raise BadInput(f"{path}: {what} holds no tensor")
    return tuple(value)


def load_model(path: str | Path, *, seed: int = 0, check_eager: bool = True) -> LoadedModel:
    """Import `path` and return its module (eval mode) and inputs; raise BadInput with one line."""
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path}: no such file")
    if not path.is_file() or path.suffix != ".py":
        raise BadInput(f"{path}: not a Python file")
    source = path.read_bytes()
    torch.manual_seed(seed)
    mod = _import_file(path)
    ns = vars(mod)

    model_cls = ns.get("Model")
    if isinstance(model_cls, type) and issubclass(model_cls, torch.nn.Module) and callable(ns.get("get_inputs")):
        init = ()
        if callable(ns.get("get_init_inputs")):
            init = _call(path, "get_init_inputs()", ns["get_init_inputs"])
            if not isinstance(init, (list, tuple)):
                raise BadInput(f"{path}: get_init_inputs() must return a list or tuple")
        module = _call(path, "Model(*get_init_inputs())", model_cls, *init)
        inputs = _as_inputs(path, "get_inputs()", _call(path, "get_inputs()", ns["get_inputs"]))
        conv = "kernelbench"
    elif isinstance(ns.get("Repro"), type) and issubclass(ns["Repro"], torch.nn.Module) and "args" in ns:
        module = _call(path, "Repro()", ns["Repro"])
        inputs = _as_inputs(path, "args", ns["args"])
        conv = "minifier"
    elif isinstance(ns.get("model"), torch.nn.Module) and ("example_inputs" in ns or callable(ns.get("get_inputs"))):
        module = ns["model"]
        if "example_inputs" in ns:
            inputs = _as_inputs(path, "example_inputs", ns["example_inputs"])
        else:
            inputs = _as_inputs(path, "get_inputs()", _call(path, "get_inputs()", ns["get_inputs"]))
        conv = "instance"
    else:
        raise BadInput(f"{path}: no model found: {LOOKED_FOR}")
    if not isinstance(module, torch.nn.Module):
        raise BadInput(f"{path}: the model is a {type(module).__name__}, not an nn.Module")
    module.eval()
    if check_eager:
        with torch.no_grad():
            _call(path, "the model in eager mode", module, *inputs)
    return LoadedModel(str(path), conv, module, inputs, hashlib.sha256(source).hexdigest()[:16])
