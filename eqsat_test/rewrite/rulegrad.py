"""Rules' gradient classes: whether a rule's two sides have the same gradient (exact), the same except at ties, kinks and special values (edge), or not (different), measured by sampling as `rules check` samples values.

A rewrite that is equivalent in the forward pass may change the gradient where the function is
not differentiable: `relu(x)` has gradient 0 at x = 0, `clamp(x, min=0)` has 1; `maximum(a, b)`
splits a tie's gradient in half, `where(a > b, a, b)` gives it all to b. Training mode (`--grad`)
judges gradients, so it needs to know, per rule, what its rewrite does to them.

How it is measured (`grad_class`): the rule's sample plan (rewrite/rulesample.py), every sample
where both sides run; each floating variable is a leaf that requires grad, and both sides are
differentiated from one cotangent (random normal values, the same for both). The gradients are
compared element by element.
- exact: equal on every sample;
- edge: differ only on samples with special values, signed zeros or integer limits, or on 16-bit
  floats (ties and kinks live there: float32 and float64 normal-range samples are continuous random
  values, which tie with probability 0);
- different: differ on a float32/float64 normal-range sample (or one side has no derivative where
  the other has).
Gradients are compared up to rounding (GRAD_TOL), whatever the numerics class: a backward formula
rounds in its own order, and rounding is the judge's business, not the rule's.

Declared classes (`@rule(..., grad=...)`) are checked against the measurement by `rules check
--grad`; the built-in rules' measured classes are recorded in rules/_grad_classes.json
(`GRAD_CLASSES_FILE`: `eqsat-test rules check --grad --record`), keyed by rule source so that a
changed rule is measured again.
"""
from __future__ import annotations

import json
import os
import random
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from eqsat_test.rewrite.rulecache import cache_dir
from eqsat_test.rewrite.rulecheck import APPROX_TOL, OneThread, intra_op_threads, run_sample
from eqsat_test.rewrite.ruledsl import BUILTIN_RULES_DIR, GRAD_CLASSES, Rule
from eqsat_test.rewrite.rulesample import plan_samples, traps_on_int_min
from eqsat_test.rewrite.ruletrace import out_leaves, run_side, trace_rule

GRAD_CLASSES_FILE = BUILTIN_RULES_DIR / "_grad_classes.json"
GRAD_SAMPLES = 60  # main plan samples per rule (the edge plan adds its ties, zeros and limits)
USER_SAMPLES = 40  # a quick measurement of a user's rule file at load, as its numerics get
_RANK = {c: k for k, c in enumerate(GRAD_CLASSES)}  # exact < edge < different
GRAD_TOL = {dt: max(10 * tol, 1e-6) for dt, tol in APPROX_TOL.items()}  # relative to the magnitude (float64: eager's
# hardsigmoid backward holds 1/6 in float32, 3e-8 off)
# dtypes whose normal-range samples hold no ties (16-bit floats tie often: 256 values per octave)
_CONTINUOUS = (torch.float32, torch.float64)


@dataclass(frozen=True)
class GradResult:
    """The measured gradient class of one rule, and the first sample that made it so."""

    rule: str
    measured: str  # exact | edge | different
    declared: str | None
    samples: int  # samples where both sides ran and something was differentiated
    example: str | None = None  # the first sample whose gradients differ (of the measured class)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """A declared class is true when the measured one is no worse (a rule declared edge may measure exact)."""
        return self.declared is None or _RANK[self.measured] <= _RANK[self.declared]

    def line(self) -> str:
        status = "ok  " if self.ok else "FAIL"
        claim = f" (declared {self.declared})" if self.declared else ""
        s = f"{status} {self.rule:<40} gradient {self.measured}{claim}, {self.samples} samples"
        return s + (f"\n     {self.example}" if self.example and (not self.ok or self.measured != "exact") else "")

    def to_dict(self) -> dict:
        return {"rule": self.rule, "measured": self.measured, "declared": self.declared, "samples": self.samples,
                "example": self.example, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_dict(cls, d: dict) -> "GradResult":
        return cls(d["rule"], d["measured"], d.get("declared"), d.get("samples", 0), d.get("example"),
                   d.get("seconds", 0.0))


def _differentiable(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def _grads(run, inputs: dict, names: list[str], cot: list) -> list | str:
    """The gradients of one side's differentiable outputs (cotangents `cot`) w.r.t. `names`; a string
    when the side cannot be differentiated (no derivative formula)."""
    leaves = {k: v.detach().clone().requires_grad_(True) if k in names else v for k, v in inputs.items()}
    try:
        with torch.enable_grad():
            out = run(leaves)
            outs = [t for _, t in out_leaves(out) if _differentiable(t) and t.requires_grad]
            if not outs:
                return [torch.zeros_like(leaves[n]) for n in names]
            got = torch.autograd.grad(outs, [leaves[n] for n in names], cot[:len(outs)], allow_unused=True)
    except Exception as e:  # noqa: BLE001 - an op without a derivative, mostly
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:160] if str(e).strip() else ''}"
    return [torch.zeros_like(leaves[n]) if g is None else g.detach() for n, g in zip(names, got)]


def _cotangents(out: Any, gen: torch.Generator) -> list:
    return [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype)
            for _, t in out_leaves(out) if _differentiable(t)]


def _differ(a: torch.Tensor, b: torch.Tensor, numerics: str, special: bool, tol: float) -> torch.Tensor | None:
    """The positions where gradients a and b differ (None: the sample is not judged). Gradients are
    compared up to rounding whatever the rule's numerics (a backward formula rounds in its own order:
    GRAD_TOL of the coarsest dtype involved, `tol`): equal, both NaN, or both finite and close; an approximate rule's samples with specials
    are not judged, as its forward is not."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return torch.ones((), dtype=torch.bool)
    if special and numerics == "approximate":
        return None
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    fin = torch.isfinite(a) & torch.isfinite(b)
    a64, b64 = a.double(), b.double()
    mag = torch.maximum(a64.abs(), b64.abs())
    scale = max(1.0, float(mag[fin].max())) if bool(fin.any()) else 1.0
    close = (a64 - b64).abs() <= max(tol, GRAD_TOL.get(a.dtype, 1e-4)) * (mag + 0.5 * scale)
    return ~same & ~(fin & close)


def grad_class(rule: Rule, *, seed: int = 0, samples: int = GRAD_SAMPLES) -> GradResult:
    """Measure `rule`'s gradient class (module docstring)."""
    with OneThread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _grad_class(rule, seed, samples)


def _grad_class(rule: Rule, seed: int, samples: int) -> GradResult:
    t0 = time.perf_counter()
    salt = zlib.crc32(rule.name.encode()) ^ (seed * 0x9E3779B1)
    rng = random.Random(salt)
    gen = torch.Generator().manual_seed(salt & 0x7FFFFFFF)
    cot_gen = torch.Generator().manual_seed((salt >> 1) & 0x7FFFFFFF)
    traced: dict = {}
    measured, example, n = "exact", None, 0
    for s in plan_samples(rule, samples, rng):
        if s.shape_kind == "large":  # the gradient of a tie does not depend on the threads: skipped
            continue
        key = tuple(s.scalars.items())
        if key not in traced:
            sides = trace_rule(rule, s.scalars)
            traced[key] = sides, not traps_on_int_min(rule, sides)
        sides, int_min = traced[key]
        o = run_sample(rule, s, sides, rng, gen, int_min)
        if o.kind != "ok":
            continue
        names = [v for v, t in o.inputs.items() if _differentiable(t)]
        if not names:
            continue
        if sides.fallback is not None:
            def lhs(xs, f=sides.fallback):
                return f(**xs)[0]

            def rhs(xs, f=sides.fallback):
                return f(**xs)[1]
        else:
            def lhs(xs, sd=sides):
                return run_side(sd.lhs_nodes, sd.lhs, xs)

            def rhs(xs, sd=sides):
                return run_side(sd.rhs_nodes, sd.rhs, xs)
        cot = _cotangents(o.lhs, cot_gen)
        with intra_op_threads(s.threads):
            gl, gr = _grads(lhs, o.inputs, names, cot), _grads(rhs, o.inputs, names, cot)
        if isinstance(gl, str):  # the matched program has no derivative there: nothing a training step runs
            continue
        n += 1
        plain = s.values == "plain" and all(o.inputs[v].dtype in _CONTINUOUS for v in names)
        if isinstance(gr, str):
            why, cls = f"the lhs has a gradient, the rhs raises {gr}", "different"
        else:
            why, cls = None, None
            tol = max(GRAD_TOL.get(t.dtype, 0.0) for t in o.inputs.values())
            for name, a, b in zip(names, gl, gr):
                bad = _differ(a, b, rule.numerics, s.special, tol)
                if bad is not None and bool(bad.any()):
                    p = tuple(bad.nonzero()[0].tolist()) if bad.dim() else ()
                    av, bv = (a[p].item(), b[p].item()) if a.shape == b.shape else (tuple(a.shape), tuple(b.shape))
                    why = (f"d/d{name} differs at {int(bad.sum())} of {bad.numel()} positions, first at {p}: "
                           f"lhs {av!r} vs rhs {bv!r}")
                    cls = "different" if plain else "edge"
                    break
        if cls is not None and _RANK[cls] > _RANK[measured]:
            kind = {"plain": "normal-range values", "special": "special values", "zeros": "signed zeros",
                    "bounds": "integer limits"}.get(s.values, s.values)
            inputs = "; ".join(f"{k}={v.dtype}{list(v.shape)}" for k, v in o.inputs.items())
            measured, example = cls, f"{kind} ({inputs}{''.join(f'; {k}={v!r}' for k, v in s.scalars.items())}): {why}"
            if measured == "different":
                break
    return GradResult(rule.name, measured, rule.grad, n, example, time.perf_counter() - t0)


# --------------------------------------------------------------------------------------------
# the recorded classes of the built-in rules


def read_recorded(path: Path | None = None) -> dict:
    """{rule name: {"class", "source"}} from the recorded file ({} where there is none)."""
    try:
        return json.loads((path or GRAD_CLASSES_FILE).read_text()).get("rules", {})
    except (OSError, ValueError):
        return {}


def record_results(results: list[GradResult], rules: list[Rule], path: Path | None = None) -> None:
    """Write the measured classes of `rules` into `path`, keeping the entries of rules not measured now."""
    path = path or GRAD_CLASSES_FILE
    by_name = {r.name: r for r in rules}
    table = read_recorded(path)
    for res in results:
        table[res.rule] = {"class": res.measured, "source": by_name[res.rule].source_hash(),
                           **({"example": res.example[:300]} if res.example else {})}
    path.write_text(json.dumps({"about": "measured gradient classes of the built-in rules (rewrite/rulegrad.py); "
                                         "eqsat-test rules check --grad --record writes it",
                                "torch": torch.__version__, "rules": dict(sorted(table.items()))}, indent=1) + "\n")


def check_grads(rules: list[Rule], *, seed: int = 0, samples: int = GRAD_SAMPLES, record: bool = False,
                path: Path | None = None) -> list[GradResult]:
    """Measure every rule's gradient class; with `record`, write those of the built-in rules to `path`."""
    results = [grad_class(r, seed=seed, samples=samples) for r in rules]
    if record:
        builtin = [r for r in rules if Path(r.source).resolve().parent == BUILTIN_RULES_DIR]
        names = {r.name for r in builtin}
        record_results([g for g in results if g.rule in names], builtin, path)
    return results


def classes_of(rules: list[Rule], *, measure_missing: bool = True, samples: int = GRAD_SAMPLES,
               log=lambda s: None) -> dict[str, str]:
    """{rule name: gradient class}: the declared class, else the recorded one (where the rule's source
    is the recorded one's), else measured now (`measure_missing`; rules of the user's own files, and
    built-in ones changed since the record) and kept in the user's cache (beside the compiled rules',
    keyed by rule source and torch version). A user's declaration is measured quickly too: a false one
    gets a warning and the measured class."""
    recorded = read_recorded()
    out: dict[str, str] = {}
    todo = []
    for r in rules:
        rec = recorded.get(r.name)
        if r.grad is not None:
            out[r.name] = r.grad
            if measure_missing and Path(r.source).resolve().parent != BUILTIN_RULES_DIR:  # a user's declaration: checked
                got = grad_class(r, samples=USER_SAMPLES)
                if not got.ok:
                    log(f"WARNING: rule {r.name} declares grad={r.grad!r} but its gradients are {got.measured}: "
                        f"{(got.example or '')[:300]} -- used as {got.measured}")
                    out[r.name] = got.measured
        elif rec is not None and rec.get("source") == r.source_hash():
            out[r.name] = rec["class"]
        else:
            todo.append(r)
    if todo and measure_missing:
        cache_file = cache_dir() / f"grad-classes-{torch.__version__}.json"
        try:
            cache = json.loads(cache_file.read_text())
        except (OSError, ValueError):
            cache = {}
        t0, measured = time.perf_counter(), 0
        for r in todo:
            key = f"{r.name}|{r.source_hash()}|{samples}"
            if key not in cache:
                cache[key] = grad_class(r, samples=samples).measured
                measured += 1
            out[r.name] = cache[key]
        if measured:
            log(f"measured the gradient class of {measured} rules without a recorded one "
                f"({time.perf_counter() - t0:.0f} s; kept in {cache_file})")
            try:
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache_file.with_suffix(f".tmp{os.getpid()}")
                tmp.write_text(json.dumps(cache))
                tmp.replace(cache_file)
            except OSError:
                pass
    return out
