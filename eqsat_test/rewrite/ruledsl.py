"""The rule-authoring language: `@rule`, `Tensor(...)`/`Scalar(...)` variable specs, rule loading.

A rule is ordinary PyTorch: one function returning `(lhs, rhs)`, or a pair of functions given to
`rule_pair`. Its parameters are annotated with `Tensor(...)` or `Scalar(...)`, which say what the
pattern variables may bind to (rank and dtype preconditions). This module needs only torch: rule
files load, list and check without egglog; `rewrite.compile_rules` turns them into rewrites.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from eqsat_test.rewrite.rulefiles import BUILTIN_RULES_DIR, RuleError, rule_files  # noqa: F401  (re-exported: rule authors import them here)

FLOATING = ("float32", "float64", "float16", "bfloat16")
SIGNED_INT = ("int8", "int16", "int32", "int64")
INTEGRAL = SIGNED_INT + ("uint8",)
BOOL = ("bool",)
NUMERIC = FLOATING + INTEGRAL
ANY_DTYPE = NUMERIC + BOOL
SIGNED = FLOATING + SIGNED_INT  # dtypes where negation is meaningful

NUMERICS = ("exact", "ieee-edge", "approximate")
# Gradient classes (rewrite/rulegrad.py): the sides' gradients are equal (by the numerics class), equal
# except at ties, kinks and special values, or different; None on a rule: not declared (measured instead)
GRAD_CLASSES = ("exact", "edge", "different")
FAMILIES = (
    "spelling", "layout", "algebra", "activation", "reduction", "linalg", "concat",
    "dtype-logic", "neutral", "misc", "schema", "decomposition", "stress", "pattern", "fallback",
)



@dataclass(frozen=True)
class Tensor:
    """A tensor pattern variable: `rank` is an int or a tuple of allowed ranks (None: any of 1..4),
    `dtype` the allowed dtype names (default: every dtype), `min_size` the smallest extent each
    dimension may have when sampled (e.g. 2 for rules that need a non-trivial dimension), `shape`
    an example shape when variables must fit together (matmul: Tensor(shape=(3, 4)) and
    Tensor(shape=(4, 5))); the rule still matches operands of any size of that rank."""

    rank: int | tuple[int, ...] | None = None
    dtype: tuple[str, ...] | str = ANY_DTYPE
    min_size: int = 1
    shape: tuple[int, ...] | None = None  # an example shape (e.g. for matmul operands); fixes the rank

    @property
    def ranks(self) -> tuple[int, ...]:
        if self.shape is not None:
            return (len(self.shape),)
        if self.rank is None:
            return (1, 2, 3, 4)
        return (self.rank,) if isinstance(self.rank, int) else tuple(self.rank)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return (self.dtype,) if isinstance(self.dtype, str) else tuple(self.dtype)


@dataclass(frozen=True)
class Scalar:
    """A Python-number pattern variable: matches any literal of that kind in the graph
    (`kind` is "float" or "int"); `values` are the values `rules check` samples."""

    kind: str = "float"
    values: tuple = ()

    def sample_values(self) -> tuple:
        if self.values:
            return self.values
        if self.kind == "int":
            return (0, 1, 2, -1, 3, 7)
        return (0.0, 1.0, 0.5, -2.0, 3.25, 1e-3, 1e4)


@dataclass(frozen=True)
class Rule:
    """One rewrite rule, as written by its author."""

    name: str
    family: str
    numerics: str
    fn: Callable  # (**vars) -> (lhs, rhs)
    params: dict  # var name -> Tensor | Scalar
    bidirectional: bool = False
    same_shape: bool = True  # tensor variables of one rank share one shape when sampled
    source: str = ""  # file the rule came from
    doc: str = ""
    tags: tuple = field(default_factory=tuple)
    source_text: str = ""  # generated rules: the text they were generated from (for caching)
    grad: str | None = None  # declared gradient class (GRAD_CLASSES); None: measured (rewrite/rulegrad.py)

    @property
    def tensor_vars(self) -> list[str]:
        return [k for k, v in self.params.items() if isinstance(v, Tensor)]

    @property
    def scalar_vars(self) -> list[str]:
        return [k for k, v in self.params.items() if isinstance(v, Scalar)]

    @property
    def dtypes(self) -> tuple[str, ...] | None:
        """The dtypes this rule is an equivalence at: those every tensor variable allows (None: all).
        A variant built with it stays equivalent only at these dtypes (the dtype sweep keeps to them)."""
        allowed = set(ANY_DTYPE)
        for v in self.params.values():
            if isinstance(v, Tensor):
                allowed &= set(v.dtypes)
        return None if allowed >= set(ANY_DTYPE) else tuple(d for d in ANY_DTYPE if d in allowed)

    @property
    def fixes_sizes(self) -> bool:
        """Whether the rule reads its tensors' sizes (`x.shape`, `x.size()`): its right side then holds
        the sizes it was applied at as literals (`x.narrow(0, 0, n // 2)`), so a variant built with it
        is equivalent to its seed at those sizes only (the size and dynamic sweeps skip it)."""
        try:
            text = self.source_text or inspect.getsource(self.fn)
        except (OSError, TypeError):
            return False
        return bool(re.search(r"\.shape\b|\.size\(|\.dim\(|\.ndim\b|\.numel\(", text))

    def source_hash(self) -> str:
        try:
            text = self.source_text or inspect.getsource(self.fn)
        except (OSError, TypeError):
            text = self.name
        return hashlib.sha256(text.encode()).hexdigest()[:16]



_collecting: list[Rule] | None = None


def _params_of(fn: Callable) -> dict:
    try:  # rule files may use `from __future__ import annotations` (string annotations)
        sig = inspect.signature(fn, eval_str=True)
    except Exception as e:
        raise RuleError(f"rule {getattr(fn, '__name__', fn)}: cannot evaluate its annotations: {e}") from e
    params = {}
    for name, p in sig.parameters.items():
        ann = p.annotation
        if ann is inspect.Parameter.empty:
            ann = Tensor()
        if not isinstance(ann, (Tensor, Scalar)):
            raise RuleError(
                f"rule {fn.__name__}: parameter {name!r} must be annotated with Tensor(...) or "
                f"Scalar(...), got {ann!r}"
            )
        params[name] = ann
    if not any(isinstance(v, Tensor) for v in params.values()):
        raise RuleError(f"rule {fn.__name__}: needs at least one Tensor(...) parameter")
    return params


def _register(r: Rule) -> Rule:
    if r.numerics not in NUMERICS:
        raise RuleError(f"rule {r.name}: numerics must be one of {NUMERICS}, got {r.numerics!r}")
    if r.grad is not None and r.grad not in GRAD_CLASSES:
        raise RuleError(f"rule {r.name}: grad must be one of {GRAD_CLASSES} (or left out), got {r.grad!r}")
    if _collecting is not None:
        _collecting.append(r)
    return r


def rule(*, family: str, numerics: str, bidirectional: bool = False, name: str | None = None,
         same_shape: bool = True, tags: tuple = (), grad: str | None = None):
    """Decorate `def r(x: Tensor(...), ...): return lhs, rhs`. `grad`: the sides' gradient class
    (GRAD_CLASSES), checked by `rules check --grad`; left out, it is measured."""

    def deco(fn: Callable) -> Rule:
        return _register(Rule(
            name=name or fn.__name__, family=family, numerics=numerics, fn=fn,
            params=_params_of(fn), bidirectional=bidirectional, same_shape=same_shape,
            source=getattr(fn, "__module__", ""), doc=(fn.__doc__ or "").strip(), tags=tuple(tags), grad=grad,
        ))

    return deco


def rule_pair(lhs: Callable, rhs: Callable, *, name: str, family: str, numerics: str,
              bidirectional: bool = False, same_shape: bool = True, tags: tuple = (), grad: str | None = None) -> Rule:
    """A rule from two functions with the same parameters: `lhs(**vars)` rewrites to `rhs(**vars)`."""
    params = _params_of(lhs)
    if list(_params_of(rhs)) != list(params):
        raise RuleError(f"rule {name}: lhs and rhs must take the same parameters")

    def both(**kw):
        return lhs(**kw), rhs(**kw)

    both.__signature__ = inspect.signature(lhs)  # type: ignore[attr-defined]
    return _register(Rule(
        name=name, family=family, numerics=numerics, fn=both, params=params,
        bidirectional=bidirectional, same_shape=same_shape, source=getattr(lhs, "__module__", ""),
        doc=(lhs.__doc__ or "").strip(), tags=tuple(tags), grad=grad,
    ))


def make_rule(name: str, body: Callable, params: dict, *, family: str, numerics: str,
              bidirectional: bool = False, same_shape: bool = True, tags: tuple = (),
              doc: str = "", source_text: str = "", grad: str | None = None) -> Rule:
    """A rule generated by code (e.g. from op tables): `body(**vars)` returns (lhs, rhs) and
    `params` maps each variable to its Tensor(...)/Scalar(...) spec, in order. `source_text`
    should name what the rule was generated from (it keys the compiled-rule cache)."""

    def fn(**kw):
        return body(**kw)

    fn.__name__ = name
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=v)
         for k, v in params.items()])
    fn.__module__ = getattr(body, "__module__", "")
    return _register(Rule(
        name=name, family=family, numerics=numerics, fn=fn, params=_params_of(fn),
        bidirectional=bidirectional, same_shape=same_shape, source=fn.__module__, doc=doc,
        tags=tuple(tags), source_text=source_text or f"{name}|{params!r}", grad=grad,
    ))


def load_rule_file(path: Path) -> list[Rule]:
    """Import one rule file and return the rules it defines, in order."""
    global _collecting
    path = Path(path)
    if not path.is_file():
        raise RuleError(f"rule file not found: {path}")
    mod_name = "eqsat_rules_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise RuleError(f"cannot import rule file {path}")
    module = importlib.util.module_from_spec(spec)
    saved, _collecting = _collecting, []
    try:
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except RuleError:
            raise
        except Exception as e:  # a user's file: say which file and why, in one line
            raise RuleError(f"error while loading rule file {path}: {type(e).__name__}: {e}") from e
        found = _collecting
    finally:
        _collecting = saved
    for r in found:
        object.__setattr__(r, "source", str(path))
    return found


def load_rules(specs: list[str] | tuple[str, ...] | None = None) -> list[Rule]:
    """All rules named by `specs` (default: the built-in library), duplicates by name rejected."""
    specs = list(specs) if specs else ["default"]
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for s in specs:
        for f in rule_files(s):
            for r in load_rule_file(f):
                if r.name in seen:
                    raise RuleError(f"rule name {r.name!r} defined twice ({seen[r.name]} and {f})")
                seen[r.name] = str(f)
                rules.append(r)
    return rules


def dtype_of(name: str) -> torch.dtype:
    return getattr(torch, name)
