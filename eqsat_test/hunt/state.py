"""The state a program is drawn in: what the generator may draw (GenOptions), the values drawn so far, each run on the program's inputs, and the helpers op builders pick operands, dims, numbers and new inputs with."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch

from eqsat_test.hunt.inputs import InputSpec, Profile, draw_dtype, draw_layout, draw_values


@dataclass(frozen=True)
class GenOptions:
    """What the generator may draw. The defaults are hunt mode's."""

    min_ops: int = 3
    max_ops: int = 15
    inplace: bool = True  # in-place ops, writes to inputs and to views of them, read back afterwards
    inplace_share: float = 0.3  # of programs that may write in place (the rest stay open to every rewrite)
    dynamic_share: float = 0.15  # programs compiled with dynamic=True
    no_input_share: float = 0.03  # programs that build their tensors inside forward (an anchor input gives the device)
    max_inputs: int = 5
    op_seconds: float = 0.5  # an op slower than this on the inputs is drawn again


class DrawError(Exception):
    """An op's builder found no valid arguments among the values drawn so far."""


@dataclass
class Gen:
    """The state while a program is drawn: the values so far (each run on the program's inputs), the inputs and
    parameters made, and the random stream. Op builders (hunt/ops*.py) read and extend it."""

    rng: random.Random
    profile: Profile
    opts: GenOptions
    seed: int
    env: dict = field(default_factory=dict)  # name -> its value on the program's inputs (a real tensor)
    order: list[str] = field(default_factory=list)  # value names an op may read, oldest first
    inputs: list[InputSpec] = field(default_factory=list)
    params: list[InputSpec] = field(default_factory=list)
    index_names: set[str] = field(default_factory=set)  # index inputs: only index ops read them, nothing writes them
    uses: dict[str, int] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)  # value -> the magnitude profile it came from (inputs.FLOAT_VALUES)
    writes: list[str] = field(default_factory=list)
    read_back: list[str] = field(default_factory=list)
    pending_read: str | None = None  # an input just written: the next op reads it back through a view
    closed: bool = False  # no more inputs (a program that builds its tensors inside forward)
    self_ns: SimpleNamespace = field(default_factory=SimpleNamespace)
    _generator: torch.Generator = field(default_factory=torch.Generator)

    # ---- values -------------------------------------------------------------------------------
    def t(self, name: str) -> torch.Tensor:
        return self.env[name]

    @property
    def device(self) -> str:
        """How forward names the device of tensors it builds: the first input's."""
        return f"{self.inputs[0].name}.device"

    def pick(self, pred=None, recent: float = 0.6) -> str:
        """A value an op may read (not an index input), the latest ones most often; DrawError if none fits."""
        names = [n for n in self.order if n not in self.index_names and (pred is None or pred(self.env[n]))]
        if not names:
            raise DrawError("no operand fits")
        if self.pending_read and self.pending_read in names and self.rng.random() < 0.8:
            return self.pending_read
        if self.rng.random() < recent:
            return self.rng.choice(names[-3:])
        return self.rng.choice(names)

    def partner(self, a: str, pred=None, fresh: float = 0.25) -> str:
        """A second operand that broadcasts to a's shape (a value drawn before, a new input of a's shape or a
        suffix of it); DrawError when none fits and no input may be added."""
        shape = tuple(self.t(a).shape)
        fits = [n for n in self.order if n != a and n not in self.index_names and _broadcasts_to(self.t(n).shape, shape)
                and (pred is None or pred(self.t(n)))]
        if fits and self.rng.random() > fresh:
            return self.rng.choice(fits[-4:])
        k = self.rng.randrange(len(shape) + 1) if shape else 0
        sub = shape[k:] if self.rng.random() < 0.3 else shape
        if self.rng.random() < 0.3 and sub:
            sub = tuple(1 if self.rng.random() < 0.3 else d for d in sub)
        return self.new_input(sub, dtype=draw_dtype(self.rng, self.profile) if self.rng.random() < 0.4 else
                              str(self.t(a).dtype).replace("torch.", ""))

    def new_input(self, shape: tuple[int, ...], dtype: str | None = None, values: str | None = None,
                  layout: str | None = None, high: int = 0) -> str:
        """A new input of the program (DrawError past opts.max_inputs): its spec, and its value in the env."""
        if len(self.inputs) >= self.opts.max_inputs or self.closed:
            raise DrawError("no more inputs")
        index = values == "index"
        name = f"i{sum(1 for i in self.inputs if i.values == 'index')}" if index else \
            f"x{sum(1 for i in self.inputs if i.values != 'index')}"
        dtype = "int64" if index else dtype or draw_dtype(self.rng, self.profile)
        spec = InputSpec(name=name, shape=tuple(shape), dtype=dtype,
                         values=values or draw_values(self.rng, self.profile, dtype),
                         layout="contiguous" if index else layout or draw_layout(self.rng, tuple(shape)),
                         seed=self.seed * 16 + len(self.inputs) + len(self.params) * 5 + 1000, high=high)
        self.inputs.append(spec)
        self.tags[name] = spec.values
        self.env[name] = self.make(spec)
        self.order.append(name)
        if index:
            self.index_names.add(name)
        return name

    def new_index(self, shape: tuple[int, ...], high: int) -> str:
        """An int64 input of positions in [0, high) (repeats allowed: gather, index_add, scatter_add)."""
        if high <= 0:
            raise DrawError("nothing to index")
        return self.new_input(shape, values="index", high=high)

    def new_param(self, shape: tuple[int, ...], dtype: str) -> str:
        """A parameter of the module (a convolution's weight, a matrix), as `self.wK`."""
        name = f"w{len(self.params)}"
        spec = InputSpec(name=name, shape=tuple(shape), dtype=dtype, values="normal",
                         seed=self.seed * 16 + 500 + len(self.params))
        self.params.append(spec)
        setattr(self.self_ns, name, self.make(spec))
        return f"self.{name}"

    def unique_positions(self, n: int, k: int) -> str:
        """k distinct positions in [0, n) as a tensor literal built in forward (writes that must not collide)."""
        if k > n or k <= 0:
            raise DrawError("not enough positions")
        pos = self.rng.sample(range(n), k)
        return f"torch.tensor({pos}, device={self.device})"

    def input_names(self) -> set[str]:
        return {i.name for i in self.inputs}

    def make(self, spec: InputSpec) -> torch.Tensor:
        return eval(spec.source(), {"torch": torch, "g": self._generator})  # (our own rendered expression)

    def dim(self, a: str, nonempty: bool = False) -> int:
        """A dim of a (negative half of the time: models spell both); DrawError for a 0-d tensor."""
        t = self.t(a)
        dims = [d for d in range(t.dim()) if not nonempty or t.shape[d] > 0]
        if not dims:
            raise DrawError("no dim")
        d = self.rng.choice(dims)
        return d - t.dim() if self.rng.random() < 0.5 else d

    def scalar(self, a: str) -> str:
        """A Python number fit for a's dtype: exact zeros and ones, halves, big and small magnitudes."""
        t = self.t(a)
        if t.dtype == torch.bool:
            return self.rng.choice(("True", "False", "1", "0"))
        if not t.is_floating_point():
            return str(self.rng.choice((0, 1, 2, 3, -1, -2, 5, 7, 127)))
        return self.rng.choice(("0.0", "1.0", "-1.0", "0.5", "2.0", "-0.5", "3.0", "1e-3", "0.1", "1e4", "-2.5"))


def _broadcasts_to(small, big) -> bool:
    if len(small) > len(big):
        return False
    return all(s == b or s == 1 for s, b in zip(reversed(tuple(small)), reversed(tuple(big))))


