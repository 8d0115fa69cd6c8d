"""Hunt programs cut from real graphs: a model file captured as eqsat-test captures it (lowering/load.py at the hunt's tensor bound, then lowering/capture.py), a connected window of 3 to 12 compute nodes of one of its FX graphs chosen from a seed, written as a model file in the generator's form (class Model, get_inputs(), a GENERATOR header naming the source, the graph, the node range and the seed). The window's inputs are the values flowing into it, at their real shapes and dtypes (magnitudes and layouts drawn as the generator draws them, integers kept in the range they had); its outputs are the values flowing out."""
from __future__ import annotations

import operator
import random
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch
import torch.fx

from eqsat_test.hunt.inputs import FLOAT_DTYPES, MAX_ELEMENTS, InputSpec, draw_layout, draw_profile, draw_values, numel
from eqsat_test.hunt.sources import display_path, resolve_source

# Bump when the same (seed, source) would give another window: a stored window names the version that cut it.
WINDOWS_VERSION = "1"
MIN_NODES, MAX_NODES = 3, 12  # compute nodes a window holds (getitem of a tuple it makes is not counted)
SMALL_ELEMENTS = 2 ** 12  # the bound of the second capture, for windows whose values are too big at the first
CUT_TRIES = 24  # windows tried per seed before it is given up (an input too big, a dtype the hunt cannot draw)
DYNAMIC_SHARE = 0.15  # windows compiled with dynamic=True, as the generator's programs
# Nodes no window holds: random ops (eager and compiled draw differently), grad and autocast modes, telemetry,
# asserts, symbolic sizes, higher-order ops.
SKIP = re.compile(r"rand|bernoulli|multinomial|normal_|uniform_|exponential_|poisson|dropout|rrelu|_set_grad_enabled|"
                  r"autocast|_log_api_usage|vmap|_functorch|higher_order|profiler|record_function|_assert|sym_|"
                  r"^wrap|_check")
TRANSFORMS = re.compile(r"vmap|_functorch|higher_order")  # graphs holding these are not run again (global state)
INT_DTYPES = ("int8", "uint8", "int16", "int32", "int64")
GIVEN_ELEMENTS = 256  # integer inputs this small keep their real values (offsets, lengths, ids: structure a range loses)
FX_GLOBALS = {"torch", "inf", "nan", "NoneType", "device", "fx_pytree", "pytree"}  # the file's preamble defines them


class TooBig(Exception):
    """A value of the window has more than MAX_ELEMENTS elements at this capture's sizes."""


class CutError(Exception):
    """No window: the source does not capture, or no window of its graphs fits. `stage` is capture or cut."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(reason)
        self.stage, self.reason = stage, reason


@dataclass(frozen=True)
class Fact:
    """A node's value when its graph ran on the captured inputs: a tensor (shape and dtype from the node's meta
    where it has them; integers' range), tensors in a tuple or list, a literal (a number, size, dtype, None), or
    something opaque (a submodule) no window reads."""

    kind: str  # tensor, tensors, literal, opaque
    shape: tuple[int, ...] = ()
    dtype: str = ""
    low: int = 0  # integer tensors: the smallest value
    high: int = 1  # integer tensors: one past the largest value
    nonneg: bool = False  # floating tensors: no element was negative (a variance, a probability, a count)
    data: tuple[int, ...] = ()  # integer tensors of at most GIVEN_ELEMENTS elements: the values, flattened
    sentinel: int | None = None  # integer tensors whose negative elements all hold one value (an ignore_index):
    # that value; low is then the smallest of the others
    literal: object = None


@dataclass(frozen=True)
class Source:
    """A captured model file: its graphs and, per graph, every node's Fact."""

    path: str  # as windows name it (repo-relative where under the repo)
    graphs: tuple[torch.fx.GraphModule, ...]
    facts: tuple[dict[str, Fact], ...]
    bound: int = MAX_ELEMENTS  # the test size it was captured at (elements an input, parameter or buffer)


@dataclass(frozen=True)
class Window:
    """One window of a real graph, as a program of the hunt."""

    seed: int
    version: str
    source_path: str
    graph: int
    span: tuple[int, int]  # the positions of its first and last node in the graph
    nodes: tuple[str, ...]  # the graph's node names it holds, in order
    ops: tuple[str, ...]  # their targets' names
    inputs: tuple[InputSpec, ...]
    input_nodes: tuple[str, ...]  # the graph's node each input stands for ("" for an anchor that gives the device)
    body: tuple[str, ...]  # forward's lines
    imports: tuple[str, ...]
    output_nodes: tuple[str, ...]  # the graph's nodes forward returns, in order
    dynamic: bool
    bound: int = MAX_ELEMENTS  # the test size of the capture it was cut from (Source.bound)

    def source(self) -> str:
        return render(self)

    def record(self) -> dict:
        """What the store keeps of it beside the file (stdlib values)."""
        return {"kind": "window", "seed": self.seed, "version": f"windows-{self.version}", "source": self.source_path,
                "graph": self.graph, "test_size": self.bound, "span": list(self.span), "nodes": list(self.nodes), "ops": list(self.ops),
                "classes": [], "dynamic": self.dynamic, "inplace": any(o.endswith("_") for o in self.ops),
                "inputs": [i.describe() for i in self.inputs], "dtypes": sorted({i.dtype for i in self.inputs}),
                "shapes": [list(i.shape) for i in self.inputs], "values": sorted({i.values for i in self.inputs}),
                "layouts": sorted({i.layout for i in self.inputs}), "outputs": list(self.output_nodes)}


# ---------------------------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------------------------

_CAPTURED: dict[tuple[str, int], Source | CutError] = {}


def captured(path: str | Path, bound: int = MAX_ELEMENTS) -> Source:
    """The model file captured as `eqsat-test run` captures it, at a test size of at most `bound` elements an
    input, parameter or buffer (lowering/sizes.py shrinks the file's sizes where the model still runs); kept for
    the process."""
    key = (str(resolve_source(path).resolve()), bound)
    if key not in _CAPTURED:
        try:
            _CAPTURED[key] = _capture(*key)
        except CutError as e:
            _CAPTURED[key] = e
    got = _CAPTURED[key]
    if isinstance(got, CutError):
        raise got
    return got


def _capture(path: str, bound: int) -> Source:
    from eqsat_test.lowering.capture import capture  # (Dynamo: imported only once a window is cut)
    from eqsat_test.lowering.load import load_model  # (the same)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            loaded = load_model(path, max_elements=bound)
            graphs = capture(loaded.module, loaded.inputs)
        except Exception as e:  # noqa: BLE001 - a file that does not load or capture gives no window, whatever the error
            raise CutError("capture", _line(e)) from e
        facts = []
        for g in graphs:  # a graph that holds a transform (vmap) is not run again: its state is the process's
            rec = _Recorder(g.gm)
            if not any(TRANSFORMS.search(_target_name(n)) for n in g.gm.graph.nodes if n.op == "call_function"):
                try:
                    with torch.no_grad():
                        rec.run(*[x.clone() if isinstance(x, torch.Tensor) else x for x in g.inputs])
                except Exception:  # noqa: BLE001 - a graph that does not run again gives no window
                    rec.facts.clear()
            facts.append(rec.facts)
        if not any(facts):
            raise CutError("capture", "no graph of the file runs again on its captured inputs")
    return Source(display_path(path), tuple(g.gm for g in graphs), tuple(facts), bound)


class _Recorder(torch.fx.Interpreter):
    """Runs a captured graph on its inputs and keeps each node's Fact (not its value: memory stays small)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.facts: dict[str, Fact] = {}

    def run_node(self, n: torch.fx.Node):
        out = super().run_node(n)
        self.facts[n.name] = _fact(n, out)
        return out


def _fact(n: torch.fx.Node, value) -> Fact:
    if isinstance(value, torch.Tensor):
        meta = n.meta.get("val", n.meta.get("example_value"))
        shape = tuple(int(d) for d in (meta.shape if isinstance(meta, torch.Tensor) else value.shape))
        dtype = str(meta.dtype if isinstance(meta, torch.Tensor) else value.dtype).replace("torch.", "")
        low, high, nonneg = 0, 1, False
        data: tuple[int, ...] = ()
        sentinel: int | None = None
        if dtype in INT_DTYPES and value.numel():
            low, high = int(value.min()), min(int(value.max()) + 1, 2 ** 63 - 1)
            rest = value[value >= 0]
            if low < 0 and rest.numel() and bool((value[value < 0] == low).all()):
                sentinel, low = low, int(rest.min())
            if value.numel() <= GIVEN_ELEMENTS and tuple(value.shape) == shape:
                data = tuple(int(v) for v in value.flatten().tolist())
        elif value.is_floating_point() and value.numel():
            nonneg = bool((value >= 0).all())
        return Fact("tensor", shape, dtype, low, high, nonneg, data, sentinel)
    if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
        return Fact("tensors")
    if isinstance(value, (int, float, bool, str, torch.dtype, torch.device, torch.Size, type(None), slice)) or (
            isinstance(value, (tuple, list)) and all(isinstance(v, (int, float, bool, type(None))) for v in value)):
        return Fact("literal", literal=value)
    return Fact("opaque")


# ---------------------------------------------------------------------------------------------
# cutting
# ---------------------------------------------------------------------------------------------

def _target_name(n: torch.fx.Node) -> str:
    if n.op == "call_method":
        return str(n.target)
    t = n.target
    return f"{getattr(t, '__module__', '') or ''}.{getattr(t, '__qualname__', getattr(t, '__name__', str(t)))}"


def _short(n: torch.fx.Node) -> str:
    return str(n.target) if n.op == "call_method" else getattr(n.target, "__name__", str(n.target))


def _computes(n: torch.fx.Node, facts: dict[str, Fact]) -> bool:
    """A node a window may hold: a call whose value is a tensor or tensors, reading nothing opaque, not skipped."""
    if n.op not in ("call_function", "call_method"):
        return False
    f = facts.get(n.name)
    if f is None or f.kind not in ("tensor", "tensors") or SKIP.search(_target_name(n)):
        return False
    return all(facts.get(a.name, Fact("opaque")).kind != "opaque" for a in n.all_input_nodes)


def cut(seed: int, source: Source) -> Window:
    """The window of `seed` in `source` (the same seed, source and version give the same window); CutError when
    none of CUT_TRIES tries fits."""
    rng = random.Random(f"eqsat-windows-{WINDOWS_VERSION}-{seed}")
    pos = [_positions(source, gi) for gi in range(len(source.graphs))]
    compute = [[n for n in gm.graph.nodes if _computes(n, source.facts[i])] for i, gm in enumerate(source.graphs)]
    free = [{n for n in c if _is_item(n, source.facts[i])} for i, c in enumerate(compute)]
    usable = [i for i, c in enumerate(compute) if len(c) - len(free[i]) >= MIN_NODES]
    if not usable:
        raise CutError("cut", f"no graph of {source.path} has {MIN_NODES} compute nodes")
    why = ""
    for _ in range(CUT_TRIES):
        gi = rng.choice(usable)
        start = rng.choice([n for n in compute[gi] if n not in free[gi]])
        size = rng.randint(MIN_NODES, MAX_NODES)
        nodes = _grow(rng, start, size, set(compute[gi]), free[gi], pos[gi])
        if nodes is None or sum(n not in free[gi] for n in nodes) < MIN_NODES:
            why = f"no connected window of {MIN_NODES} nodes"
            continue
        try:
            return _window(seed, rng, source, gi, nodes, pos[gi], free[gi])
        except TooBig as e:  # too big at the first capture's sizes: the same nodes at the second's, where it has them
            why = str(e)
            small = _smaller(source, gi, nodes)
            if small is None:
                continue
            named = _named(small, gi)
            try:
                return _window(seed, rng, small, gi, [named[n.name] for n in nodes], _positions(small, gi),
                               {named[n.name] for n in free[gi]})
            except (TooBig, CutError) as e2:
                why = str(e2)
        except CutError as e:
            why = e.reason
    raise CutError("cut", f"no window of {source.path} fits in {CUT_TRIES} tries (last: {why})")


def _smaller(source: Source, gi: int, nodes: list) -> Source | None:
    """The same file captured at SMALL_ELEMENTS, where its graph `gi` has the window's nodes (the same graph at
    smaller sizes); None where it does not capture or its graphs differ."""
    if source.bound <= SMALL_ELEMENTS:
        return None
    try:
        small = captured(resolve_source(source.path), SMALL_ELEMENTS)
    except CutError:
        return None
    if len(small.graphs) <= gi or not {n.name for n in nodes} <= set(_named(small, gi)):
        return None
    return small


def _named(source: Source, gi: int) -> dict[str, torch.fx.Node]:
    return {n.name: n for n in source.graphs[gi].graph.nodes}


def _positions(source: Source, gi: int) -> dict:
    return {n: k for k, n in enumerate(source.graphs[gi].graph.nodes)}


def _is_item(n: torch.fx.Node, facts: dict[str, Fact]) -> bool:
    """An element of a tuple of tensors (chunk, split, max with indices): free, it comes with its tuple."""
    return (n.op == "call_function" and n.target is operator.getitem and isinstance(n.args[0], torch.fx.Node)
            and facts.get(n.args[0].name, Fact("opaque")).kind == "tensors")


def _grow(rng: random.Random, start: torch.fx.Node, size: int, members: set, free: set, pos: dict) -> list | None:
    """A connected set of compute nodes from `start`, a neighbour (producer or user) at a time, until it counts
    `size` nodes or nothing is left to add; closed so that tuples are read only inside it. None if it cannot be."""
    win = {start}
    while sum(n not in free for n in win) < size:
        frontier = sorted({m for n in win for m in (*n.all_input_nodes, *n.users) if m in members and m not in win},
                          key=pos.__getitem__)
        if not frontier:
            break
        win.add(rng.choice(frontier))
    for _ in range(4 * MAX_NODES):  # close: an element brings its tuple, a tuple brings its elements
        more: set[torch.fx.Node] = {a for n in win if n in free for a in n.all_input_nodes[:1]
                                    if a not in win and a in members}
        more |= {u for n in win for u in n.users if u in free and u not in win}
        if not more:
            return sorted(win, key=pos.__getitem__)
        win |= more
    return None


def _window(seed: int, rng: random.Random, source: Source, gi: int, nodes: list, pos: dict, free: set) -> Window:
    facts = source.facts[gi]
    inside = set(nodes)
    external: list[torch.fx.Node] = []
    for n in nodes:
        for a in n.all_input_nodes:
            if a in inside or a in external:
                continue
            kind = facts[a.name].kind
            if kind == "tensors":
                raise CutError("cut", f"{n.name} reads the tuple {a.name} made outside the window")
            if kind == "tensor":
                external.append(a)
    for n in [*nodes, *external]:
        f = facts[n.name]
        if f.kind == "tensor" and numel(f.shape) > MAX_ELEMENTS:
            raise TooBig(f"{n.name} has {numel(f.shape)} elements (> {MAX_ELEMENTS})")
    profile = draw_profile(rng)
    specs = []
    for k, a in enumerate(external):
        f = facts[a.name]
        if f.dtype in FLOAT_DTYPES:
            values = draw_values(rng, profile, f.dtype)
        elif f.dtype in INT_DTYPES:
            values = "given" if f.data else "range"
        elif f.dtype == "bool":
            values = "bool"
        else:
            raise CutError("cut", f"input {a.name} is {f.dtype}, which the hunt does not draw")
        layout = draw_layout(rng, f.shape)
        specs.append(InputSpec(name=f"x{k}", shape=f.shape, dtype=f.dtype, values=values,
                               layout="contiguous" if values == "given" else layout, seed=seed * 16 + k + 1000,
                               low=f.low if values == "range" else 0, high=f.high if values == "range" else 0,
                               nonneg=f.nonneg and f.dtype in FLOAT_DTYPES, data=f.data if values == "given" else (),
                               sentinel=f.sentinel if values == "range" else None))
    outs = [n for n in nodes if facts[n.name].kind == "tensor" and
            (any(u not in inside for u in n.users) or not any(u in inside for u in n.users))]
    if not outs:
        raise CutError("cut", "no tensor flows out of the window")
    if not specs:  # nothing flows in: an anchor input gives the device, as the generator's anchor does
        specs.append(InputSpec(name="x0", shape=(1,), dtype="float32", values="normal", seed=seed * 16 + 1000))
    dynamic = rng.random() < DYNAMIC_SHARE
    body, imports = _code(nodes, external, outs, facts, len(specs))
    window = Window(seed=seed, version=WINDOWS_VERSION, source_path=source.path, graph=gi,
                    span=(pos[nodes[0]], pos[nodes[-1]]), nodes=tuple(n.name for n in nodes),
                    ops=tuple(_short(n) for n in nodes if n not in free), inputs=tuple(specs),
                    input_nodes=tuple(a.name for a in external) or ("",), body=body, imports=imports,
                    output_nodes=tuple(n.name for n in outs), dynamic=dynamic, bound=source.bound)
    if _runs(window) or all(s.layout == "contiguous" for s in specs):
        return window
    # an op that needs its input's real layout (a view of a contiguous value): the inputs contiguous, as they were
    flat = tuple(InputSpec(**{**s.__dict__, "layout": "contiguous"}) for s in specs)
    return Window(**{**window.__dict__, "inputs": flat})


def _code(nodes: list, external: list, outs: list, facts: dict[str, Fact], n_inputs: int) -> tuple[tuple[str, ...],
                                                                                                    tuple[str, ...]]:
    """forward's lines for the window (FX's own code for the copied nodes) and the imports they need."""
    g = torch.fx.Graph()
    phs = [g.placeholder(f"x{k}") for k in range(n_inputs)]
    ext = dict(zip(external, phs))
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    dev: list[torch.fx.Node] = []

    def device_of(v):  # a device the graph baked in: the first input's, so that the file runs on any device
        if not isinstance(v, torch.device):
            return v
        if not dev:
            with g.inserting_after(phs[-1]):
                dev.append(g.call_function(getattr, (phs[0], "device")))
        return dev[0]

    def arg(a: torch.fx.Node):
        if a in env:
            return env[a]
        if a in ext:
            return ext[a]
        return device_of(facts[a.name].literal)

    for n in nodes:
        new = g.node_copy(n, arg)
        new.args = torch.fx.node.map_aggregate(new.args, device_of)
        new.kwargs = torch.fx.node.map_aggregate(new.kwargs, device_of)
        env[n] = new
    g.output(tuple(env[o] for o in outs))
    code = g.python_code(root_module="self")
    imports = []
    for name, obj in sorted(code.globals.items()):
        if name in FX_GLOBALS:
            continue
        if isinstance(obj, ModuleType):
            imports.append(f"import {obj.__name__} as {name}")
        elif getattr(obj, "__module__", None) and "." not in getattr(obj, "__qualname__", "."):
            imports.append(f"from {obj.__module__} import {obj.__qualname__} as {name}")
        else:
            raise CutError("cut", f"the window's code names {name}, which cannot be imported")
    lines = code.src.strip("\n").splitlines()
    start = next(k for k, ln in enumerate(lines) if ln.startswith("def forward"))
    body = tuple(re.sub(r";  (?:\w+ = )+None$", "", ln[4:]) for ln in lines[start + 1:] if ln.strip())
    return body, tuple(imports)


def _runs(w: Window) -> bool:
    ns: dict = {"__name__": "eqsat_hunt_window"}
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            exec(compile(render(w), "<window>", "exec"), ns)  # (a window this module wrote)
            ns["Model"]()(*ns["get_inputs"]())
    except Exception:  # noqa: BLE001 - any failure: tried again with contiguous inputs
        return False
    return True


def window_of(seed: int, path: str | Path) -> Window:
    """The window of `seed` cut from the model file at `path` (CutError: stage and why, when there is none)."""
    return cut(seed, captured(path))


# ---------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------

def render(w: Window) -> str:
    """The model file: a docstring saying where the window was cut, GENERATOR (source, graph, node range, seed),
    class Model whose forward is the window, get_inputs() making its inputs from their seeds."""
    args = ", ".join(i.name for i in w.inputs)
    header = {"name": "eqsat-test windows", "version": w.version, "seed": w.seed, "source": w.source_path,
              "graph": w.graph, "nodes": w.span, "test_size": w.bound, "dynamic": w.dynamic}
    lines = [
        f'"""Cut by eqsat-test hunt (windows {w.version}, seed {w.seed}) from {w.source_path}, graph {w.graph}, '
        f'nodes {w.span[0]}..{w.span[1]}: {len(w.ops)} ops ({", ".join(w.ops)}){", dynamic=True" if w.dynamic else ""}.',
        "",
        f"Inputs stand for: {', '.join(f'{i.name}={n}' for i, n in zip(w.inputs, w.input_nodes) if n) or 'none'}.",
        f"Replay: python -m eqsat_test.hunt --window {w.seed} --source {w.source_path}   (prints this file)",
        '"""',
        "from math import inf, nan",
        "",
        "import torch",
        "import torch.nn as nn",
        "import torch.nn.functional as F",
        *w.imports,
        "",
        f"GENERATOR = {header!r}",
        "device = torch.device",
        "NoneType = type(None)",
        "",
        "",
        "class Model(nn.Module):",
        f"    def forward(self, {args}):",
        *(f"        {ln}" for ln in w.body),
        "",
        "",
        "def get_inputs():",
        "    g = torch.Generator()",
        *(f"    {i.name} = {i.source()}" for i in w.inputs),
        f"    return [{args}]",
    ]
    return "\n".join(lines) + "\n"


def _line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:300]
