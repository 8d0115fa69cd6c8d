"""Names for FX call targets: `operator.add`, `torch.add`, `Tensor.add`, and back to callables."""
from __future__ import annotations

import importlib
import operator

import torch

_MODULE_ALIASES = {"_operator": "operator", "torch._C._VariableFunctions": "torch",
                   "torch._tensor": "torch"}
_SEARCH = ("torch", "torch.nn.functional", "operator", "math", "torch.special", "torch.linalg",
           "torch.fft", "torch._C._nn", "torch._C._linalg", "torch._C._special", "builtins")


def resolve(name: str):
    """The callable a target name stands for; `Tensor.x` names a method (returns None)."""
    if name.startswith("Tensor."):
        return None
    mod, _, attr = name.rpartition(".")
    obj = importlib.import_module(mod)
    return getattr(obj, attr)


def name_of(target) -> str | None:
    """An importable dotted name for an FX call_function target, or None when it has none."""
    if isinstance(target, str):
        return f"Tensor.{target}"
    mod = getattr(target, "__module__", None)
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    candidates = []
    if mod and qual and "<" not in qual:
        candidates.append(f"{_MODULE_ALIASES.get(mod, mod)}.{qual}")
    short = getattr(target, "__name__", None)
    if short:
        candidates += [f"{m}.{short}" for m in _SEARCH]
    for c in candidates:
        try:
            if resolve(c) is target:
                return c
        except (ImportError, AttributeError, ValueError):
            continue
    return None


# Python operators and how they are written (for rendering source that keeps the spelling).
BINARY = {
    "operator.add": "+", "operator.sub": "-", "operator.mul": "*", "operator.truediv": "/",
    "operator.floordiv": "//", "operator.mod": "%", "operator.matmul": "@", "operator.pow": "**",
    "operator.and_": "&", "operator.or_": "|", "operator.xor": "^", "operator.lshift": "<<",
    "operator.rshift": ">>", "operator.lt": "<", "operator.le": "<=", "operator.gt": ">",
    "operator.ge": ">=", "operator.eq": "==", "operator.ne": "!=",
}
UNARY = {"operator.neg": "-", "operator.pos": "+", "operator.invert": "~", "operator.not_": "not "}

# Ops whose result differs between two calls with the same arguments: each node stays unique.
RANDOM_MARKERS = ("rand", "dropout", "bernoulli", "multinomial", "normal", "uniform",
                  "exponential", "poisson", "randperm", "cauchy", "geometric", "log_normal")


def is_random(name: str) -> bool:
    base = name.rsplit(".", 1)[-1]
    return any(m in base for m in RANDOM_MARKERS)


def is_mutating(name: str) -> bool:
    """In-place ops: rewriting around them would reorder side effects."""
    base = name.rsplit(".", 1)[-1]
    if name.startswith("Tensor.") and base.endswith("_") and not base.endswith("__"):
        return True
    return name in ("operator.setitem", "operator.delitem") or (
        name.startswith("operator.i") and name not in ("operator.invert", "operator.is_", "operator.is_not", "operator.index"))


assert operator  # re-exported name used in rendered code
