"""One generated program: drawn op by op from a seed (each op's arguments chosen valid by its own shape and dtype rules, then run on the program's inputs before it is kept), and rendered as a model file that records its generator version and seed."""
from __future__ import annotations

import random
import re
import time
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from eqsat_test.hunt import GENERATOR_VERSION
from eqsat_test.hunt.inputs import MAX_ELEMENTS, InputSpec, Profile, draw_dtype, draw_profile, draw_shape, numel
from eqsat_test.hunt.ops import BUILDERS
from eqsat_test.hunt.state import DrawError, Gen, GenOptions


@dataclass(frozen=True)
class Stmt:
    """One line of forward: `target = expr`, or, for an in-place statement (target None), `expr` itself."""

    target: str | None
    expr: str
    op: str  # the op's name, as the mix counts it (flip, index_add, add_, interpolate, ...)
    cls: str  # its class: pointwise, binary, view, reduction, scan, index, inplace, dtype, resample, matmul, creation


@dataclass(frozen=True)
class Program:
    """A generated program: its statements, inputs and parameters, and what it was drawn from."""

    seed: int
    version: str
    stmts: tuple[Stmt, ...]
    inputs: tuple[InputSpec, ...]
    params: tuple[InputSpec, ...]
    outputs: tuple[str, ...]
    dynamic: bool
    profile: Profile
    rejected: int = 0  # op draws that were drawn again (invalid for their operands, or too slow)
    writes: tuple[str, ...] = ()  # inputs the program writes in place
    read_back: tuple[str, ...] = ()  # of those, the ones read again after the write
    inplace: bool = True  # drawn with in-place ops allowed (GenOptions.inplace): part of what replays it
    no_inputs: bool = False  # builds its tensors inside forward (its one input, the anchor, gives only the device)

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(s.op for s in self.stmts)

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(sorted({s.cls for s in self.stmts}))

    def source(self) -> str:
        return render(self)

    def record(self) -> dict:
        """What the store keeps of it beside the file (stdlib values)."""
        return {"seed": self.seed, "version": self.version, "ops": list(self.ops), "classes": list(self.classes),
                "dynamic": self.dynamic, "inplace": self.inplace, "no_inputs": self.no_inputs, "inputs": [i.describe() for i in self.inputs],
                "dtypes": sorted({i.dtype for i in self.inputs}), "shapes": [list(i.shape) for i in self.inputs],
                "values": sorted({i.values for i in self.inputs}), "layouts": sorted({i.layout for i in self.inputs}),
                "writes": list(self.writes), "read_back": list(self.read_back), "rejected": self.rejected,
                "profile": {"dtype": self.profile.dtype, "sizes": self.profile.sizes, "values": self.profile.values}}


# ---------------------------------------------------------------------------------------------
# drawing a program
# ---------------------------------------------------------------------------------------------

# Op classes and how often each is drawn.
CLASS_WEIGHTS = {"pointwise": 14, "binary": 14, "view": 14, "reduction": 10, "scan": 4, "index": 9, "inplace": 8,
                 "dtype": 5, "resample": 5, "matmul": 3, "creation": 2}


def draw_program(seed: int, opts: GenOptions | None = None) -> Program:
    """The program of `seed` (the same seed, generator version and options give the same program)."""
    opts = opts or GenOptions()
    rng = random.Random(f"eqsat-hunt-{GENERATOR_VERSION}-{seed}")
    profile = draw_profile(rng)
    g = Gen(rng=rng, profile=profile, opts=opts, seed=seed)
    no_inputs = rng.random() < opts.no_input_share
    dynamic = rng.random() < opts.dynamic_share
    if no_inputs:  # the anchor: forward reads only its device
        g.new_input((1,), dtype="float32", values="normal", layout="contiguous")
        g.order.clear()
        g.closed = True
    else:
        g.new_input(draw_shape(rng, profile, profile.rank), dtype=profile.dtype)
        if rng.random() < 0.5:
            g.new_input(_second_shape(rng, g), dtype=draw_dtype(rng, profile))
    n_ops = rng.randint(opts.min_ops, opts.max_ops)
    stmts: list[Stmt] = []
    rejected = 0
    writes = opts.inplace and rng.random() < opts.inplace_share
    classes = [c for c in CLASS_WEIGHTS if c != "inplace" or writes]
    weights = [CLASS_WEIGHTS[c] for c in classes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(stmts) < n_ops and rejected < 40 * n_ops:
            cls = "creation" if not g.order else (
                "view" if g.pending_read and rng.random() < 0.7 else rng.choices(classes, weights)[0])
            builder = rng.choice(BUILDERS[cls])
            stmt = _try(g, builder, f"v{len(stmts)}")
            if stmt is None:
                rejected += 1
                continue
            stmts.append(stmt)
    outputs = _outputs(g, stmts)
    used = set(re.findall(r"\b\w+\b", " ".join(s.expr for s in stmts) + " " + " ".join(outputs)))
    inputs = tuple(i for k, i in enumerate(g.inputs) if k == 0 or i.name in used)  # (the first gives the device)
    params = tuple(w for w in g.params if w.name in used)
    return Program(seed=seed, version=GENERATOR_VERSION, stmts=tuple(stmts), inputs=inputs,
                   params=params, outputs=outputs, dynamic=dynamic, profile=profile, rejected=rejected,
                   writes=tuple(dict.fromkeys(g.writes)), read_back=tuple(dict.fromkeys(g.read_back)),
                   inplace=opts.inplace, no_inputs=no_inputs)


def _second_shape(rng: random.Random, g: Gen) -> tuple[int, ...]:
    """The second input: a's shape (binary ops meet), a suffix of it (broadcasting), or its own."""
    first = tuple(g.t(g.inputs[0].name).shape)
    r = rng.random()
    if r < 0.45:
        return first
    if r < 0.75 and first:
        return first[rng.randrange(len(first)):]
    return draw_shape(rng, g.profile, rng.choice((1, 2, 3)))


def _try(g: Gen, builder, target: str) -> Stmt | None:
    """Draw one op with `builder` and run it on the env; None (the state as before) if it is invalid, too big or too
    slow. Inputs or parameters the builder added stay until the end, where those no statement reads are dropped."""
    try:
        expr, op, cls = builder(g)
    except DrawError:
        return None
    inplace = cls == "inplace"
    glb = {"torch": torch, "F": F, "self": g.self_ns, **g.env}
    before = _snapshot(g) if inplace else {}
    t0 = time.monotonic()
    try:
        if inplace:
            exec(expr, glb)  # (our own rendered statement)
            value = None
        else:
            value = eval(expr, glb)  # (our own rendered expression)
    except Exception:  # noqa: BLE001 - any error: the draw is invalid for these operands
        _restore(g, before)
        return None
    if time.monotonic() - t0 > g.opts.op_seconds:
        _restore(g, before)
        return None
    if not inplace:
        if not isinstance(value, torch.Tensor) or value.is_complex() or numel(tuple(value.shape)) > MAX_ELEMENTS:
            return None
        g.env[target] = value
        g.order.append(target)
        read = _names_in(expr, g)
        if read and read[0] in g.tags:  # a value keeps the magnitude profile of what it was made from
            g.tags[target] = g.tags[read[0]]
    for name in _names_in(expr, g):
        g.uses[name] = g.uses.get(name, 0) + 1
        if g.pending_read == name:
            g.read_back.append(name)
            g.pending_read = None
    if inplace:
        changed = [n for n, t in before.items() if not _same(t, g.env[n])]
        g.writes.extend(n for n in changed if n in g.input_names())
        if changed and g.rng.random() < 0.8:  # read it back next (an input where one was written)
            g.pending_read = next((n for n in changed if n in g.input_names()), changed[0])
        return Stmt(None, expr, op, cls)
    return Stmt(target, expr, op, cls)


def _snapshot(g: Gen) -> dict[str, torch.Tensor]:
    """Copies of every value, before an in-place statement that may write them."""
    return {n: t.clone() for n, t in g.env.items()}


def _restore(g: Gen, before: dict) -> None:
    """Put back what a rejected in-place statement wrote. A value whose elements overlap (an expanded or unfolded
    view) cannot be written: the value it views is, and brings it back."""
    with torch.no_grad():
        for n, t in before.items():
            try:
                g.env[n].copy_(t)
            except RuntimeError:
                pass


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.equal(a, b) or (a.is_floating_point() and
                                                             torch.equal(a.isnan(), b.isnan()) and
                                                             torch.equal(a.nan_to_num(), b.nan_to_num())))


def _names_in(expr: str, g: Gen) -> list[str]:
    words = set(re.findall(r"\b[a-z]\d+\b", expr))
    return [n for n in g.order if n in words] + [n for n in g.index_names if n in words and n not in g.order]


def _outputs(g: Gen, stmts: list[Stmt]) -> tuple[str, ...]:
    """What forward returns: the last value and up to three values nothing read, latest first."""
    made = [s.target for s in stmts if s.target]
    if not made:  # only writes: what they wrote
        return tuple(dict.fromkeys(g.writes))[:1] or (g.inputs[0].name,)
    unused = [n for n in reversed(made[:-1]) if not g.uses.get(n)]
    return (made[-1], *unused[:3])


# ---------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------

def render(p: Program) -> str:
    """The model file: a docstring saying how it was made, GENERATOR (version, seed, dynamic), class Model whose
    forward holds the statements, get_inputs() making the inputs from their seeds."""
    args = ", ".join(i.name for i in p.inputs)
    lines = [
        f'"""Generated by eqsat-test hunt (generator {p.version}, seed {p.seed}): {len(p.stmts)} ops '
        f'({", ".join(p.classes) or "none"}){", dynamic=True" if p.dynamic else ""}.',
        "",
        f"Replay: python -m eqsat_test.hunt --seed {p.seed}{'' if p.inplace else ' --no-inplace'}   "
        f"(prints this file; generator {p.version})",
        '"""',
        "import torch",
        "import torch.nn as nn",
        "import torch.nn.functional as F",
        "",
        f"GENERATOR = {{'name': 'eqsat-test hunt', 'version': {p.version!r}, 'seed': {p.seed}, "
        f"'dynamic': {p.dynamic}, 'inplace': {p.inplace}}}",
        "",
        "",
        "class Model(nn.Module):",
    ]
    if p.params:
        lines += ["    def __init__(self):", "        super().__init__()", "        g = torch.Generator()"]
        for w in p.params:
            grad = "" if w.dtype.startswith(("float", "bfloat")) else ", requires_grad=False"
            lines.append(f"        self.{w.name} = nn.Parameter({w.source()}{grad})")
        lines.append("")
    lines.append(f"    def forward(self, {args}):")
    for s in p.stmts:
        lines.append(f"        {s.target} = {s.expr}" if s.target else f"        {s.expr}")
    outs = ", ".join(p.outputs)
    lines.append(f"        return {outs}" + ("," if len(p.outputs) == 1 else ""))
    lines += ["", "", "def get_inputs():", "    g = torch.Generator()"]
    for i in p.inputs:
        lines.append(f"    {i.name} = {i.source()}")
    lines.append(f"    return [{args}]")
    return "\n".join(lines) + "\n"
