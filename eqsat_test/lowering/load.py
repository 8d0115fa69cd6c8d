"""Load a model file (KernelBench, minifier or `model` + inputs convention) into a module and inputs."""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import math
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch

from eqsat_test.lowering.calls import positional
from eqsat_test.lowering.sizes import DEFAULT_MAX_ELEMENTS, SizeGuard, Source, TooLarge, narrow_inputs, plan_sizes
from eqsat_test.lowering.sizes import record as size_record


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
    sizes: dict = field(default_factory=dict)  # lowering/sizes.py record: policy, scaled, shapes, note


def _modname(path: Path) -> str:
    return "eqsat_model_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]


def _import_file(path: Path):
    name = _modname(path)
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
        raise BadInput(f"{path}: raised while being imported: {one_line(e)}") from e
    return mod


def one_line(e: BaseException) -> str:
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
        raise BadInput(f"{path}: {what} raised {one_line(e)}") from e


def _as_inputs(path: Path, what: str, value) -> tuple:
    if isinstance(value, dict):  # keyword inputs: positional() has made them the KeywordCall's values
        value = tuple(value.values())
    if isinstance(value, torch.Tensor):
        value = (value,)
    if not isinstance(value, (list, tuple)):
        raise BadInput(f"{path}: {what} must be a list or tuple of inputs, got {type(value).__name__}")
    for i, v in enumerate(value):
        if not isinstance(v, (torch.Tensor, int, float, bool)) and v is not None:
            raise BadInput(f"{path}: {what}[{i}] is a {type(v).__name__}; inputs must be tensors "
                           "or Python numbers")
    return tuple(value)


def _resolve(path: Path, ns: dict) -> tuple[str, torch.nn.Module, tuple]:
    """(convention, module in eval mode, inputs) of an imported model file's namespace."""
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
    return conv, module, inputs


def _resolve_called(path: Path, ns: dict) -> tuple[str, torch.nn.Module, tuple]:
    """_resolve, with keyword inputs (a dict from get_inputs() / example_inputs / args) passed by name."""
    raw = {}
    for key in ("example_inputs", "args"):
        if isinstance(ns.get(key), dict):
            raw[key] = ns[key]
    if callable(ns.get("get_inputs")):
        fn = ns["get_inputs"]

        def get_inputs():
            value = fn()
            raw["get_inputs"] = value
            return value
        ns = {**ns, "get_inputs": get_inputs}
    conv, module, inputs = _resolve(path, ns)
    value = raw.get("get_inputs", raw.get("example_inputs" if conv == "instance" else "args"))
    if isinstance(value, dict):
        module, inputs = positional(module, value)
        module.eval()
    return conv, module, inputs


def _shapes(inputs) -> list:
    return [list(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs]


def _param_elements(module: torch.nn.Module) -> int:
    return sum(t.numel() for t in [*module.parameters(), *module.buffers()])


def _runs(module, inputs) -> str | None:
    """None when the model runs eagerly on `inputs`, else one line saying why not."""
    try:
        with torch.no_grad():
            module(*inputs)
    except Exception as e:
        return one_line(e)
    return None


def load_model(path: str | Path, *, seed: int = 0, check_eager: bool = True, sizes: str = "test",
               max_elements: int = DEFAULT_MAX_ELEMENTS) -> LoadedModel:
    """Import `path` and return its module (eval mode) and inputs; raise BadInput with one line.

    sizes="test" (the default): at a test size, every input, parameter and buffer at most
    `max_elements` elements (lowering/sizes.py decides it on the meta device; it is validated
    here eagerly, and the file's own sizes are used, with a note, where it fails).
    sizes="given": at the file's own sizes. Either way `.sizes` records what was used."""
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path}: no such file")
    if not path.is_file() or path.suffix != ".py":
        raise BadInput(f"{path}: not a Python file")
    if sizes not in ("test", "given"):
        raise BadInput(f"sizes must be 'test' or 'given', not {sizes!r}")
    source = path.read_bytes()
    sha = hashlib.sha256(source).hexdigest()[:16]
    if sizes == "given":
        conv, module, inputs = _load_given(path, seed, check_eager)
        shp = _shapes(inputs)
        rec = size_record("given", max_elements, {}, shp, shp)
        return LoadedModel(str(path), conv, module, inputs, sha, rec)
    return _load_test(path, source, sha, seed, check_eager, max_elements)


def _load_given(path: Path, seed: int, check_eager: bool):
    torch.manual_seed(seed)
    conv, module, inputs = _resolve_called(path, vars(_import_file(path)))
    if check_eager:
        with torch.no_grad():
            _call(path, "the model in eager mode", module, *inputs)
    return conv, module, inputs


def _build(path: Path, src: Source, values: dict, seed: int, check_eager: bool):
    """(conv, module, inputs) at these literal values, or one line saying why they do not run."""
    torch.manual_seed(seed)
    try:
        conv, module, inputs = _resolve_called(path, vars(src.execute(values)))
        bad = _runs(module, inputs) if check_eager else None
    except Exception as e:  # noqa: BLE001 -- BadInput included: the given sizes decide that
        bad = one_line(e)
    return bad if bad is not None else (conv, module, inputs)


def _validated(path: Path, src: Source, plan, max_elements: int, seed: int, check_eager: bool):
    """(plan, built) for the first plan that runs eagerly, else one line saying why none did.
    A plan that fails eagerly is mended, in turn: by planning again with every step's forward
    checked on the meta device (it backs off a value that breaks a view, heads that no longer
    divide); then by finding the size to blame (each shrunk size put back in turn, biggest shrink
    first: the first whose return makes the model run, e.g. the positions of an embedding that
    the sequence indexes) and planning again with it kept as written."""
    keep: set[int] = set()
    forward, first_bad, tried, failing = False, "", set(), plan
    for _ in range(6):
        key = tuple(sorted(plan.values.items()))
        if plan.values and key not in tried:
            tried.add(key)
            built = _build(path, src, plan.values, seed, check_eager)
            if isinstance(built, tuple):
                return plan, built
            first_bad, failing = first_bad or built, plan
        if not forward:
            forward = True
        else:
            lits, vals = src.literals, failing.values
            culprit = next((i for i in sorted(vals, key=lambda i: vals[i] / lits[i].given)
                            if i not in keep and len(vals) > 1 and isinstance(
                                _build(path, src, {k: v for k, v in vals.items() if k != i}, seed,
                                       check_eager), tuple)), None)
            if culprit is None:
                break
            keep.add(culprit)
        try:
            plan = plan_sizes(src, max_elements, check_forward=True, keep=keep)
        except Exception:  # noqa: BLE001 -- no better plan
            break
    return f"the test size {failing.scaled} failed eagerly ({first_bad})"


def _load_test(path: Path, source: bytes, sha: str, seed: int, check_eager: bool,
               max_elements: int) -> LoadedModel:
    def done(conv, module, inputs, scaled, given_shapes, note="", fallback=False, given_params=None):
        rec = size_record("test", max_elements, scaled, _shapes(inputs), given_shapes, note, fallback,
                          None if given_params is None else (given_params, _param_elements(module)))
        return LoadedModel(str(path), conv, module, inputs, sha, rec)

    try:
        src = Source(path, source, _modname(path))
        plan = plan_sizes(src, max_elements)
    except SyntaxError:
        plan, why = None, ""  # the real import says it in one line
    except Exception as e:  # noqa: BLE001 -- NotMeta, or any surprise: decide on real tensors instead
        plan, why = None, str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    note = ""
    if plan is not None:
        given_params = sum(math.prod(s) for s in plan.given.params.values()) if plan.given.params else None
        given_shapes = plan.given.inputs
        if not plan.values and not plan.note:  # small already: the file as it is
            conv, module, inputs = _load_given(path, seed, check_eager)
            return done(conv, module, inputs, {}, given_shapes, "", False, given_params)
    if plan is not None and plan.values:
        found = _validated(path, src, plan, max_elements, seed, check_eager)
        if isinstance(found, tuple):
            plan, (conv, module, inputs) = found
            return done(conv, module, inputs, plan.scaled, given_shapes, plan.note, False, given_params)
        note = found
    elif plan is not None:  # too big, but no size of the file could shrink it
        note = plan.note
    else:
        given_params, given_shapes = None, None
        note = f"sizes not found on the meta device ({why})" if why else ""
    guard = plan is None  # the meta device could not tell the sizes: build for real, but nothing huge
    torch.manual_seed(seed)
    try:
        with SizeGuard() if guard else contextlib.nullcontext():
            conv, module, inputs = _resolve_called(path, vars(_import_file(path)))
    except BadInput as e:
        if isinstance(e.__cause__, TooLarge):
            raise BadInput(f"{path}: no test size: {note or 'it cannot run on the meta device'}, and "
                           f"it asks for {e.__cause__}; use --sizes given to test it at the file's "
                           "sizes") from e
        raise
    given_shapes = given_shapes or _shapes(inputs)
    scaled: dict = {}
    if plan is None and not any(isinstance(x, torch.Tensor) and x.numel() > max_elements for x in inputs):
        note = ""  # not on the meta device, but small: nothing to say
    elif any(isinstance(x, torch.Tensor) and x.numel() > max_elements for x in inputs):
        narrowed, scaled = narrow_inputs(list(inputs), max_elements, lambda xs: _runs(module, xs) is None)
        if scaled:
            inputs = tuple(narrowed)
            note = "; ".join(filter(None, [note, "inputs narrowed directly"]))
        else:
            note = "; ".join(filter(None, [note, "no dim of the inputs could be shrunk: the file's sizes are used"]))
    if check_eager:
        with torch.no_grad():
            _call(path, "the model in eager mode", module, *inputs)
    # fell back: a test size was asked for, but the file's own sizes are what is tested
    fell_back = not scaled and any(t.numel() > max_elements for t in [
        *(x for x in inputs if isinstance(x, torch.Tensor)), *module.parameters(), *module.buffers()])
    return done(conv, module, inputs, scaled, given_shapes, note, fell_back, given_params)
