"""Generation half of the pipeline: model file -> variant bundle (needs egglog; runs no compiler).

load -> capture -> lift -> saturate -> extract -> lower -> render, per captured graph, into a
bundle folder: one standalone module per variant, the inputs they load, and manifest.json
(lowering/manifest.py).
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from eqsat_test.lowering.bundle import StoredProgram, program_file_name, write_program
from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.functionalize import functionalize
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.load import BadInput, load_model
from eqsat_test.lowering.lower import largest_value
from eqsat_test.lowering.manifest import (
    Extraction,
    Graph,
    GraphLeftOut,
    Manifest,
    ManifestRules,
    Saturation,
    Variant,
)
from eqsat_test.lowering.program import CALL, LIT, SEQ, UID_KW, Program
from eqsat_test.rewrite.compile_rules import CompiledRule, compile_rules
from eqsat_test.rewrite.extract import extract_variants, read_egraph
from eqsat_test.rewrite.provenance import FreezeOnce, read_credit
from eqsat_test.rewrite.ruledsl import load_rules
from eqsat_test.rewrite.rulegrad import classes_of
from eqsat_test.rewrite.saturate import STOP_REASONS, Budget, saturate
from eqsat_test.rewrite.stageclock import StageClock


@dataclass
class GenerateOptions:
    variants: int = 32
    rules: tuple = ()  # rule specs (names, files, folders); empty: the built-in library
    seed: int = 0
    budget: Budget = field(default_factory=Budget)
    modes: tuple = ("uniform", "near-original")
    max_growth: float = 4.0  # a variant may have at most this many times the seed's ops (+16)
    # a variant may hold a value of at most this many times the elements of the seed's largest (or SIZE_FLOOR): a
    # rewrite that materialises a broadcast product (x @ y as (x[..., None] * y).sum) costs seconds and GBs eagerly
    max_size_growth: float = 16.0
    sizes: str = "test"  # "test": free sizes scaled down to max_elements per input (lowering/load.py); "given"
    max_elements: int = 2 ** 18
    deadline: float | None = None  # time.monotonic() the run's --time-budget ends at: every stage stops there
    left_out: dict = field(default_factory=dict)  # rule name -> why it is not used (a failed check at load)
    # training mode (`--grad`): the model in train(), and rules whose sides' gradients differ left out
    # (rewrite/rulegrad.py); the rules' gradient classes go into the manifest for the unsound-rewrite check
    train: bool = False


def _match(p: Program, pat, i: int, env: dict) -> bool:
    n = p.nodes[i]
    k = pat[0]
    if k in ("var", "svar"):
        if k == "svar" and n.kind != LIT:
            return False
        if pat[1] in env:
            return env[pat[1]] == i
        env[pat[1]] = i
        return True
    if k == "lit":
        return n.kind == LIT and n.name == pat[1]
    if k == "seq":
        return n.kind == SEQ and n.name == pat[1] and len(n.args) == len(pat[2]) and all(
            _match(p, a, j, env) for a, j in zip(pat[2], n.args))
    kwargs = [(kk, v) for kk, v in n.kwargs if kk != UID_KW]
    return (n.kind == CALL and n.name == pat[1] and len(n.args) == len(pat[2])
            and [kk for kk, _ in kwargs] == [kk for kk, _ in pat[3]]
            and all(_match(p, a, j, env) for a, j in zip(pat[2], n.args))
            and all(_match(p, v, j, env) for (_, v), (_, j) in zip(pat[3], kwargs)))


def _node_keys(p: Program) -> list[str]:
    """A structural digest per node (equal for equal subterms, across programs). Digests, not
    the nested text itself: text repeats shared subterms and grows exponentially on DAGs."""
    keys: list[str] = []
    for n in p.nodes:
        text = (f"{n.kind}:{n.name}({','.join(keys[a] for a in n.args)};"
                f"{','.join(k + '=' + keys[v] for k, v in n.kwargs)})")
        keys.append(hashlib.blake2b(text.encode(), digest_size=12).hexdigest())
    return keys


def _shape(pat) -> tuple:
    """A call pattern's quick filter: (arity, kwarg names, [(arg position, the call target or
    literal source it needs there)]); _match is only tried on nodes that pass it."""
    need = [(j, a[1]) for j, a in enumerate(pat[2]) if a[0] in ("call", "lit")]
    return len(pat[2]), tuple(k for k, _ in pat[3]), need


def _pattern_size(t) -> int:
    if t[0] == "call":
        return 1 + sum(_pattern_size(a) for a in t[2]) + sum(_pattern_size(v) for _, v in t[3])
    if t[0] == "seq":
        return 1 + sum(_pattern_size(a) for a in t[2])
    return 1 if t[0] == "lit" else 0


def family_labeler(original: Program, compiled: list, family: dict | None = None):
    """A `labels` function for `extract_variants`: the rule families credited for a variant's
    rewrites (by `rules_applied`, which estimates them: egglog keeps no provenance)."""
    fam = family if family is not None else {cr.name: cr.family for cr in compiled}
    cache: dict = {}
    memo: dict[str, frozenset] = {}

    def labels(p: Program) -> frozenset:
        k = p.key()
        if k not in memo:
            memo[k] = frozenset(fam.get(r, "?") for r in rules_applied(p, original, compiled, cache))
        return memo[k]

    return labels


def rules_applied(variant: Program, original: Program, rules: list[CompiledRule],
                  cache: dict | None = None) -> list[str]:
    """The rules that best explain each node `variant` has and the original has not: per new
    node, the rule with the largest right-hand side matching there (so a chain of spelling
    rules is not all credited for one rewrite). An estimate from patterns alone, kept for
    comparison: `generate` credits variants from the provenance the rewrites record
    (rewrite/provenance.py).

    `cache`: one dict per (original, rules), shared across that original's variants: the
    original's keys, the sorted rule lists and the per-subterm match results are computed once
    (a subterm's key fixes whether a pattern matches there), not once per variant."""
    c = cache if cache is not None else {}
    if c.get("original") is not original or c.get("rules") is not rules:
        c.clear()
        old_ops = {n.name for n in original.nodes if n.kind == CALL}
        by_root: dict[str, list[CompiledRule]] = {}
        for r in rules:
            if r.rhs[0] == "call":
                by_root.setdefault(r.rhs[1], []).append(r)
        for lst in by_root.values():  # most specific first; rules rewriting ops the model has first
            lst.sort(key=lambda r: (-_pattern_size(r.rhs), r.lhs[0] != "call" or r.lhs[1] not in old_ops))
        c.update(original=original, rules=rules, old=set(_node_keys(original)), old_ops=old_ops,
                 by_root={k: [(_shape(r.rhs), r) for r in v] for k, v in by_root.items()}, best={})
    old, old_ops, by_root, best = c["old"], c["old_ops"], c["by_root"], c["best"]
    keys = _node_keys(variant)
    found: list[str] = []
    for i in variant.reachable():
        n = variant.nodes[i]
        if n.kind != CALL or keys[i] in old:
            continue
        name = best.get(keys[i], "")
        if name == "":
            arity, kw = len(n.args), tuple(k for k, _ in n.kwargs if k != UID_KW)
            heads = [variant.nodes[a].name if variant.nodes[a].kind in (CALL, LIT) else None for a in n.args]
            name = next((r.name for (ar, kk, need), r in by_root.get(n.name, ())
                         if ar == arity and kk == kw and all(heads[j] == h for j, h in need)
                         and _match(variant, r.rhs, i, {})), None)
            best[keys[i]] = name
        if name is not None and name not in found:
            found.append(name)
    new_ops = {variant.nodes[i].name for i in variant.reachable() if variant.nodes[i].kind == CALL}
    for r in rules:  # rules whose rhs is a bare variable show as a removed lhs root
        if r.rhs[0] == "var" and r.lhs[0] == "call" and r.lhs[1] in old_ops - new_ops and r.name not in found:
            found.append(r.name)
            break
    return found


def _variant_dtypes(applied, rule_dtypes: dict) -> list[str] | None:
    """The dtypes a variant is equivalent to its seed at: those every rule that built it holds at (None: all)."""
    allowed = None
    for r in applied:
        if r in rule_dtypes:
            allowed = set(rule_dtypes[r]) if allowed is None else allowed & set(rule_dtypes[r])
    return None if allowed is None else sorted(allowed)


SIZE_FLOOR = 2 ** 22  # elements any variant may hold in one value, whatever its seed's largest


def size_bound(seed: Program, input_names, inputs, growth: float):
    """An `accept` for extraction: a variant whose largest value (on fake tensors) holds more than `growth` times the
    seed's largest, and more than SIZE_FLOOR elements, is refused; None where the seed has no fake run."""
    largest = largest_value(seed, input_names, inputs)
    if largest is None:
        return None
    bound = max(SIZE_FLOOR, growth * largest)

    def accept(p: Program) -> bool:
        v = largest_value(p, input_names, inputs)
        return v is None or v <= bound
    return accept


def initial_count(per_graph: int, modes: tuple) -> int:
    """Variants a graph gets at generation: all, or with guided extraction a first round (a quarter, at
    least 4); rewrite/guide.py draws the rest as results come."""
    return min(per_graph, max(4, per_graph // 4)) if "guided" in modes else per_graph


@dataclass
class GraphState:
    """What a graph keeps after saturation for variants drawn later (guided rounds, rewrite/guide.py): its
    e-graph read out as plain Python, the rule credit, and how a variant module is written."""

    gid: str
    index: int
    model_name: str
    seed: Program
    ec: object  # extract.EClassGraph
    credit: object  # provenance.Credit
    write: object  # (vid, program, title, notes) -> file name
    rules_info: ManifestRules
    max_ops: int
    budget: int  # variants this graph may have in all
    accept: object = None  # size_bound's: a variant too large to run is not drawn
    seen: set = field(default_factory=set)  # program keys drawn so far (the seed's included)
    count: int = 0  # variants written
    changed: dict = field(default_factory=dict)  # variant id -> the (class, node) it chose over the seed's

    def add(self, p: Program, mode: str, changed: frozenset = frozenset()) -> Variant:
        """Write variant `p` and return its manifest entry."""
        self.count += 1
        self.seen.add(p.key())
        vid = f"{self.gid}_v{self.count:03d}"
        self.changed[vid] = changed
        info = self.rules_info
        # the rules whose firings built this variant's e-nodes, non-exact ones first
        applied = self.credit.rules_of(p)
        numerics = {r: info.numerics.get(r, "?") for r in applied}
        dtypes = _variant_dtypes(applied, info.dtypes)
        f = self.write(vid, p, f"variant {self.count} ({mode}) of graph {self.index} of {self.model_name}",
                       [f"rules applied: {', '.join(f'{r} ({c})' for r, c in numerics.items()) or '(none)'}"])
        return Variant(vid, self.gid, f, program=program_file_name(f), seed=False, mode=mode, rules=tuple(applied),
                       rule_numerics=numerics, dtypes=None if dtypes is None else tuple(dtypes),
                       fixed_sizes=bool(set(applied) & set(info.fix_sizes)), ops=p.num_ops, key=p.key())


def generate(model_path: str | Path, out_dir: str | Path, opts: GenerateOptions | None = None,
             log=lambda s: None, on_loaded=None, keep: list | None = None) -> Manifest:
    """Write a bundle for `model_path` into `out_dir`; returns its manifest. `on_loaded()` is
    called once the model file has loaded (`eqsat-test run` starts its workers there). Each stage
    stops at `opts.deadline` (rewrite/stageclock.BudgetSpent); nothing is written before the
    model has loaded and the rules have compiled, so bad input leaves no folder behind. `keep`: a
    list that gets each rewritten graph's GraphState (for guided extraction's later rounds)."""
    opts = opts if opts is not None else GenerateOptions()
    out = Path(out_dir)
    clock = StageClock(opts.deadline, log)
    timings = clock.seconds
    doing = {"load": "loading the model file (it runs the model eagerly)", "rules": "compiling the rules",
             "capture": "capturing the model's graphs (Dynamo runs the model)", "lift": "lifting a graph",
             "saturate": "saturating an e-graph", "extract": "extracting variants", "render": "writing variants"}

    def timed(stage, fn, *a, **kw):
        with clock.stage(doing.get(stage, stage), key=stage):
            return fn(*a, **kw)

    loaded = timed("load", load_model, model_path, seed=opts.seed, sizes=opts.sizes, max_elements=opts.max_elements)
    if loaded.sizes.get("note"):
        log(f"sizes: {loaded.sizes['note']}")
    if opts.train:
        loaded.module.train()
    if on_loaded is not None:
        on_loaded()
    rules = timed("rules", load_rules, list(opts.rules) or None)
    if opts.left_out:  # the user's rules that failed their check at load (runners/cli/userrules.py)
        rules = [r for r in rules if r.name not in opts.left_out]
    grad_classes = timed("rules", classes_of, rules, log=log) if opts.train else {}
    if opts.train:
        kept = [r for r in rules if grad_classes[r.name] != "different"]
        log(f"training mode: {len(rules) - len(kept)} of {len(rules)} rules left out (their sides' gradients differ)")
        rules = kept
    compiled, rule_errors = timed("rules", compile_rules, rules, log=log)
    for e in rule_errors:
        log(f"warning: {e}")
    graphs = timed("capture", capture, loaded.module, loaded.inputs)
    log(f"{Path(str(model_path)).name}: {len(graphs)} graph(s) captured, {len(rules)} rules loaded "
        f"({sum(timings.values()):.0f} s)")
    rules_info = ManifestRules(
        count=len(rules), compiled=len(compiled), errors=tuple(rule_errors), names=tuple(sorted({r.name for r in rules})),
        families={r.name: r.family for r in rules}, numerics={r.name: r.numerics for r in rules},
        # rules that hold only at some dtypes (rewrite/ruledsl.py Rule.dtypes); the rest hold at all
        dtypes={r.name: tuple(r.dtypes) for r in rules if r.dtypes is not None},
        # rules whose right side holds the sizes they were applied at (Rule.fixes_sizes)
        fix_sizes=tuple(sorted(r.name for r in rules if r.fixes_sizes)), left_out=dict(opts.left_out),
        # training mode: each rule's gradient class (exact | edge; rewrite/rulegrad.py)
        grad={r.name: grad_classes[r.name] for r in rules} if opts.train else None)
    created = time.strftime("%Y-%m-%dT%H:%M:%S")
    graphs_out: list[Graph] = []
    variants: list[Variant] = []
    left_out: list[GraphLeftOut] = []
    fired_total: dict[str, int] = {}
    per_graph = max(1, opts.variants // len(graphs)) if graphs else 0
    out.mkdir(parents=True, exist_ok=True)
    for g in graphs:
        gid = f"g{g.index}"
        functional = timed("lift", functionalize, g.gm)  # in-place ops out of place, writes to inputs as effects
        lifted = timed("lift", lift_fx, functional.gm if functional.gm is not None else g.gm, functional.effects)
        prog = lifted.program
        if lifted.opaque:  # no standalone program can call it: the graph is left out, the construct named
            why = (f"calls {', '.join(sorted(set(o.removeprefix('opaque.') for o in lifted.opaque)))}, which no "
                   "import reaches (a local function, a lambda or a higher-order operator): it cannot be "
                   "written as a standalone program")
            log(f"graph g{g.index}: left out: {why}")
            left_out.append(GraphLeftOut(f"g{g.index}", why))
            continue
        # A graph that writes in place (an input, a buffer, or only its own intermediates) has the captured program,
        # mutations and all, as its seed: bugs in how the compiler orders, fuses or drops writes live there. Its
        # functional form is a variant beside it, and the e-graph's source.
        captured = timed("lift", lift_fx, g.gm, captured=True) if functional.rewritten or functional.blocked or \
            g.writes else None
        blocked = functional.blocked
        writes = g.writes  # what the graph wrote as it ran (version counters: a kernel may write without moving one)
        if captured is not None and functional.gm is not None:
            missed = set(g.writes) - set(functional.effects)
            if missed:  # the functional form would not write what the graph wrote
                blocked = f"functionalization misses the writes to {sorted(missed)} that the captured graph made"
            else:
                writes = functional.effects  # (in the functional form's order: the two return the same structure)
        inputs = list(g.inputs) + list(lifted.constants.values())
        is_param = list(g.is_param) + [True] * len(lifted.constants)
        inputs_file = f"{gid}.inputs.pt"
        torch.save([x.detach().cpu() if isinstance(x, torch.Tensor) else x for x in inputs], out / inputs_file)
        ginfo = Graph(gid, inputs_file=inputs_file, input_names=tuple(lifted.input_names), is_param=tuple(is_param),
                      ops=prog.num_ops, op_names=tuple(sorted(set(prog.op_labels()))), mutating=lifted.mutating,
                      opaque=tuple(lifted.opaque), functionalized=functional.rewritten, effects=tuple(lifted.effects),
                      writes=tuple(writes), captured_seed=captured is not None)

        def write(vid: str, p: Program, title: str, notes: list[str], lifted=lifted, inputs_file=inputs_file,
                  captured: bool = False, writes: tuple[str, ...] = tuple(writes)) -> str:
            """The module, and beside it the program it renders (lowering/bundle.py; the minimizer's input). A
            functional program returns the values it writes last (its effects); the captured one writes `writes`."""
            sp = StoredProgram(p, tuple(lifted.input_names), inputs_file, title, tuple(notes),
                               () if captured else lifted.effects, tuple(writes) if captured else ())
            (out / f"{vid}.py").write_text(sp.render())
            write_program(out / program_file_name(f"{vid}.py"), sp)
            return f"{vid}.py"

        name = Path(str(model_path)).name
        if captured is not None:
            seed_prog = captured.program
            seed_file = timed("render", write, f"{gid}_seed", seed_prog,
                              f"seed program: graph {g.index} of {name}, as captured (in-place ops and all)", [],
                              captured=True)
        else:
            seed_prog = prog
            seed_file = timed("render", write, f"{gid}_seed", prog, f"seed program: graph {g.index} of {name}", [])
        variants.append(Variant(f"{gid}_seed", gid, seed_file, program=program_file_name(seed_file), seed=True,
                                mode="seed", ops=seed_prog.num_ops, key=seed_prog.key()))
        if captured is not None and not blocked:  # the functional form: the seed's writes as values, written back
            f = timed("render", write, f"{gid}_functional", prog,
                      f"functional form of graph {g.index} of {name}: in-place ops out of place, "
                      "writes to inputs at the end", [])
            variants.append(Variant(f"{gid}_functional", gid, f, program=program_file_name(f), mode="functional",
                                    rule_numerics={}, ops=prog.num_ops, key=prog.key()))
        if lifted.mutating or lifted.opaque or blocked or not compiled:
            why = (f"no sound rewrite: {blocked}" if blocked else
                   "in-place ops (rewrites would reorder side effects)" if lifted.mutating else
                   f"ops without importable names {lifted.opaque}" if lifted.opaque else "no rules")
            log(f"graph {gid}: not rewritten: {why}")
            graphs_out.append(dataclasses.replace(ginfo, skipped_rewrites=why))
            continue
        log(f"graph {gid}: {prog.num_ops} ops: saturating (at most {opts.budget.seconds:g} s, "
            f"{opts.budget.iterations} iterations), then extracting variants")
        left = clock.left()
        budget = opts.budget if left is None else dataclasses.replace(opts.budget, seconds=max(0.1, min(
            opts.budget.seconds, left)))
        sat = timed("saturate", saturate, prog, compiled, budget)
        eg = FreezeOnce(sat.lifted.egraph)  # read_egraph and read_credit share one frozen copy
        ec = timed("extract", read_egraph, eg, sat.lifted.root, prog, sat.lifted.node_names)
        credit = timed("extract", read_credit, eg.freeze(), eg, rules_info.numerics)
        first = initial_count(per_graph, opts.modes)  # guided extraction: the rest come in rounds (rewrite/guide.py)
        sampling = tuple(m for m in opts.modes if m != "guided") or ("uniform", "near-original")
        accept = size_bound(prog, lifted.input_names, inputs, opts.max_size_growth)
        ex = timed("extract", extract_variants, ec, first, seed=opts.seed, modes=sampling,
                   max_ops=int(prog.num_ops * opts.max_growth) + 16, exclude={prog.key()}, accept=accept)
        del eg, sat.lifted.egraph  # drop the e-graph on the thread that made it
        timed("extract", credit.set_seed, prog)
        for name, n in sat.fired.items():
            fired_total[name] = fired_total.get(name, 0) + n
        ginfo = dataclasses.replace(
            ginfo, saturation=Saturation(sat.iterations, sat.enodes, sat.stop_reason,
                                         STOP_REASONS.get(sat.stop_reason, sat.stop_reason), round(sat.seconds, 4),
                                         tuple(sat.sizes)),
            extraction=Extraction(ec.num_classes, ec.num_enodes, round(ex.log10_space, 2), ex.attempts,
                                  ex.distinct_seen))
        state = GraphState(gid, g.index, Path(str(model_path)).name, prog, ec, credit, write, rules_info,
                           max_ops=int(prog.num_ops * opts.max_growth) + 16, budget=per_graph,
                           seen={prog.key()}, accept=accept)
        for (p, mode), changed in zip(ex.variants, ex.changed):
            variants.append(timed("render", state.add, p, mode, changed))
        if keep is not None:
            keep.append(state)
        graphs_out.append(ginfo)
        log(f"graph {gid}: {prog.num_ops} ops, {sat.enodes} e-nodes after {sat.iterations} iterations "
            f"({STOP_REASONS.get(sat.stop_reason, sat.stop_reason)}), {len(ex.variants)} distinct variants")
    if not graphs_out and left_out:
        raise BadInput(f"{model_path}: nothing to test: graph {left_out[0].id} {left_out[0].why}")
    manifest = Manifest(
        model=str(model_path), model_sha=loaded.source_sha, convention=loaded.convention,
        torch_version=torch.__version__, sizes=loaded.sizes, seed=opts.seed, created=created,
        rules=dataclasses.replace(rules_info, fired=dict(sorted(fired_total.items(), key=lambda kv: -kv[1]))),
        train=opts.train, graphs=tuple(graphs_out), variants=tuple(variants), graphs_left_out=tuple(left_out),
        timings={k: round(v, 4) for k, v in timings.items()})
    manifest.save(out)
    return manifest
