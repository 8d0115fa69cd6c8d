"""Coverage-guided extraction: variants drawn in rounds, towards the rules and e-nodes whose variants reached new compiler code.

Uniform extraction spends its variants evenly over an e-graph of thousands of rewrites, most of
which reach compiler code the seed reached already. In guided mode (`--mode guided`) a graph gets
a first round of variants at generation (rewrite/generate.py `initial_count`); then, as each
variant's result comes back with the compiler lines it reached (`--coverage`,
runners/checks/line_gain.py), its gain (lines no earlier task of the run reached) is credited to
the rules that built it (provenance) and to the e-nodes it chose over the seed's, and the next
variant is drawn with each e-class ordering its e-nodes by a weighted draw: the estimated gain of
the e-node and of the rule that built it, relative to the run's mean, with an optimistic prior so
that untried rewrites are tried. A variant is drawn one of three ways, each credited with the lines
its variants reach (a bandit over the three, each kept at KIND_FLOOR at least): a weighted uniform
draw of the whole term; a weighted near-original draw; or a mutant, as in coverage-guided fuzzing: a
base (the seed, or a variant that reached new lines, chosen by its gain) with one e-class (sometimes
two) switched to another of its e-nodes, the site drawn by those weights, the rest kept. A uniform
draw changes dozens of e-classes at once (the e-graph of a 3-op softmax holds ~10^600 terms), which
reaches much code but buries a single rewrite such as `x.float() / T -> x / T` under others that
break the pattern it builds; a mutant tries one rewrite at a time. Rules of the families aimed at
Inductor's decisions (`pattern`, `fallback`: rules/inductor_*.py) start with a higher prior.

A campaign can carry the rule estimates from run to run in a memory file (`--guide-memory`):
{rule: [variants credited, lines credited]}, read as the prior and written back after the run.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.rewrite.extract import base_classes, extract_variants, mutant

PRIOR_WEIGHT = 1.0  # pseudo-observations of the optimistic prior in every estimate
OPTIMISM = 1.5  # the prior: this many times the run's mean gain per variant
FLOOR = 0.05  # the least weight of an e-node relative to the mean: nothing is ruled out
FAMILY_PRIOR = {"pattern": 4.0, "fallback": 4.0}  # rules aimed at Inductor's decisions (tags checked): tried first
STACK = 0.3  # the chance that a mutant stacks a second rewrite
KINDS = ("uniform", "near-original", "mutant")  # ways to draw a variant; each keeps its own credit
KIND_FLOOR = 0.15  # the least chance of each way to draw


@dataclass
class Tally:
    """Variants credited and lines credited, per key (a rule name, or an (e-class, e-node) pair)."""

    tried: dict = field(default_factory=dict)
    gain: dict = field(default_factory=dict)

    def add(self, key, lines: float) -> None:
        self.tried[key] = self.tried.get(key, 0) + 1
        self.gain[key] = self.gain.get(key, 0.0) + lines

    def estimate(self, key, prior: float) -> float:
        return (self.gain.get(key, 0.0) + PRIOR_WEIGHT * prior) / (self.tried.get(key, 0) + PRIOR_WEIGHT)


@dataclass(frozen=True)
class RuleMemory:
    """A campaign's memory of what rules' variants reached: rule -> (variants credited, lines credited)."""

    rules: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"format": "eqsat-guide-memory/1", "rules": {k: list(v) for k, v in sorted(self.rules.items())}}

    @classmethod
    def from_dict(cls, d: dict) -> "RuleMemory":
        return cls({k: (int(v[0]), float(v[1])) for k, v in (d.get("rules") or {}).items()})

    @classmethod
    def load(cls, path: str | Path | None) -> "RuleMemory":
        try:
            return cls.from_dict(json.loads(Path(path).read_text())) if path else cls()
        except (OSError, ValueError):
            return cls()

    def merged(self, tally: Tally) -> "RuleMemory":
        out = dict(self.rules)
        for k, n in tally.tried.items():
            t, g = out.get(k, (0, 0.0))
            out[k] = (t + n, g + tally.gain.get(k, 0.0))
        return RuleMemory(out)

    def save(self, path: str | Path) -> None:
        tmp = Path(str(path) + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1))
        tmp.replace(path)


class Guide:
    """The feedback loop of one run: `feedback(variant id, lines)` with each measured task, `more()` for
    the next variants (manifest entries, their modules written into the bundle). `manifest` is the bundle's,
    with every variant drawn so far: each round replaces it with a new one (`Manifest.with_variants`)."""

    def __init__(self, states: list, manifest: Manifest, bundle: Path, seed: int = 0,
                 memory: RuleMemory | None = None) -> None:
        self.states = {s.gid: s for s in states}
        self.manifest, self.bundle = manifest, Path(bundle)
        self.rng = random.Random(seed ^ 0x5EED)  # (0x5EED: this stream differs from the first round's)
        self.memory = memory or RuleMemory()
        self.rules, self.nodes = Tally(), Tally()  # this run's credit
        self.seen_lines: set = set()
        self.gains: list[float] = []  # per variant measured
        self.rules_of = {v.id: v.rules for v in manifest.variants}
        self.graph_of = {v.id: v.graph for v in manifest.variants}
        self.draws = 0
        self.corpus = {s.gid: [(dict(s.ec.original), 1.0)] for s in states}  # per graph: (base, energy)
        self.seeds_in: set = set()  # graphs whose seed's lines are in
        self.pending: list = []  # (vid, lines, credit) of variants that came back before their seed
        self.family = manifest.rules.families
        self.kinds = Tally()  # lines credited per way to draw
        self.kind_of = {v.id: v.mode for v in manifest.variants if v.mode in KINDS}

    # -- feedback
    def feedback(self, vid: str, lines: set, credit: bool = True) -> None:
        """Credit variant `vid` with the lines it reached that no earlier task did. A seed's lines, and
        with `credit` False a sweep's, only join what the run has reached. A graph's variants that come
        back before its seed wait for it: their gain is over the seed's lines."""
        gid = self.graph_of.get(vid, "")
        if vid.endswith("_seed"):
            self.seeds_in.add(gid)
        elif gid not in self.seeds_in and gid in self.states:
            self.pending.append((vid, lines, credit))
            return
        self._credit(vid, lines, credit)
        if vid.endswith("_seed"):
            waiting = [p for p in self.pending if self.graph_of.get(p[0]) == gid]
            self.pending = [p for p in self.pending if self.graph_of.get(p[0]) != gid]
            for p in waiting:
                self._credit(*p)

    def _credit(self, vid: str, lines: set, credit: bool) -> float:
        new = len(lines - self.seen_lines)
        self.seen_lines |= lines
        if not credit or vid not in self.rules_of or vid.endswith("_seed"):
            return float(new)
        self.gains.append(float(new))
        if vid in self.kind_of:
            self.kinds.add(self.kind_of[vid], float(new))
        rules = self.rules_of[vid]
        for r in rules:
            self.rules.add(r, new / max(1, len(rules)))
        state = self.states.get(self.graph_of.get(vid, ""))
        changed = state.changed.get(vid, ()) if state is not None else ()
        for key in changed:
            self.nodes.add((state.gid, key), new / max(1, len(changed)))
        if new > 0 and state is not None:  # an interesting variant: a base for later mutants
            self.corpus[state.gid].append(({**state.ec.original, **dict(changed)}, min(4.0, new / self.mean_gain())))
        return float(new)

    def mean_gain(self) -> float:
        return max(1.0, sum(self.gains) / len(self.gains)) if self.gains else 1.0

    def rule_estimate(self, rule: str) -> float:
        """Lines per variant credited to `rule`: this run's credit, on top of the campaign's memory."""
        prior = OPTIMISM * self.mean_gain() * FAMILY_PRIOR.get(self.family.get(rule, ""), 1.0)
        t, g = self.memory.rules.get(rule, (0, 0.0))
        tried, gain = t + self.rules.tried.get(rule, 0), g + self.rules.gain.get(rule, 0.0)
        return (gain + PRIOR_WEIGHT * prior) / (tried + PRIOR_WEIGHT)

    def weight_fn(self, state):
        mean = self.mean_gain()
        prior = OPTIMISM * mean
        made, original = state.ec.made_by, state.ec.original
        cache: dict = {}

        def weight(c: int, i: int) -> float:
            key = (c, i)
            w = cache.get(key)
            if w is None:
                if original.get(c) == i:
                    w = 1.0  # the seed's own e-node: the mean
                else:
                    r = made.get(key)
                    w = (self.rule_estimate(r) / mean if r else OPTIMISM) * \
                        (self.nodes.estimate((state.gid, key), prior) / mean)
                w = cache[key] = max(FLOOR, w)
            return w

        return weight

    # -- drawing
    def more(self, n: int = 1) -> list[Variant]:
        """Up to `n` new variants (manifest entries), from the graphs with budget left; `manifest` and the
        bundle's manifest.json are replaced by ones with them."""
        out: list[Variant] = []
        for _ in range(n):
            open_ = [s for s in self.states.values() if s.count < s.budget]
            if not open_:
                break
            state = min(open_, key=lambda s: (s.count / max(1, s.budget), s.gid))
            self.draws += 1
            kind = self._kind()
            got = self._mutant(state) if kind == "mutant" else self._draw(state, kind)
            if got is None:  # nothing new that way: the other ways
                got = self._draw(state, "uniform") or self._draw(state, "near-original") or self._mutant(state)
            if got is None:
                state.budget = state.count  # nothing new left to draw here
                continue
            p, mode, changed = got
            entry = state.add(p, mode, changed)
            self.kind_of[entry.id] = mode.replace("guided-", "")
            self.rules_of[entry.id], self.graph_of[entry.id] = entry.rules, state.gid
            out.append(entry)
        if out:  # (each counts in its graph's distinct variants found, as the summary says)
            self.manifest = self.manifest.with_variants(out)
            self.manifest.save(self.bundle)
        return out

    def _kind(self) -> str:
        """A way to draw, by the lines each has reached per variant (optimistic for the untried)."""
        prior = OPTIMISM * self.mean_gain()
        est = [self.kinds.estimate(k, prior) for k in KINDS]
        total = sum(est)
        p = [KIND_FLOOR + (1 - KIND_FLOOR * len(KINDS)) * e / total for e in est]
        return self.rng.choices(KINDS, p)[0]

    def _draw(self, state, mode: str):
        ex = extract_variants(state.ec, 1, modes=(mode,), max_ops=state.max_ops, exclude=set(state.seen),
                              weight=self.weight_fn(state), rng=self.rng, max_attempts=40, accept=state.accept)
        return (ex.variants[0][0], f"guided-{mode}", ex.changed[0]) if ex.variants else None

    @staticmethod
    def _sites(ec, base: dict, weight) -> tuple[list, list]:
        """Every (class, node) of the base's term that a mutant may switch to, and its weight: a class
        weighs as its best alternative, its alternatives share that by their own weights."""
        sites, w = [], []
        for c in base_classes(ec, base):
            alts = [i for i in range(len(ec.classes[c])) if i != base.get(c)]
            ws = [weight(c, i) for i in alts]
            total = sum(ws)
            for i, x in zip(alts, ws):
                sites.append((c, i))
                w.append(max(ws) * x / total)
        return sites, w

    def _mutant(self, state, attempts: int = 20):
        """A base from the corpus (by energy) with one or two sites switched (by weight), not seen before."""
        ec, weight = state.ec, self.weight_fn(state)
        corpus = self.corpus[state.gid]
        for _ in range(attempts):
            base = self.rng.choices([b for b, _ in corpus], [e for _, e in corpus])[0]
            sites, w = self._sites(ec, base, weight)
            if not sites:
                return None
            chosen: dict[int, int] = {}
            for _ in range(2 if self.rng.random() < STACK else 1):
                c, i = self.rng.choices(sites, w)[0]
                chosen[c] = i
            got = mutant(ec, base, chosen, self.rng, max_ops=state.max_ops)
            if got is not None and got[0].key() not in state.seen:
                return got[0], "guided-mutant", got[1]
        return None

    def stats(self) -> dict:
        """results.json's `stats.guided`: the draws, and the rules with the most lines credited."""
        top = sorted(self.rules.gain.items(), key=lambda kv: -kv[1])[:15]
        return {"variants_drawn": self.draws, "gains": [round(g, 1) for g in self.gains],
                "by_way": {k: {"variants": self.kinds.tried.get(k, 0), "lines": round(self.kinds.gain.get(k, 0.0), 1)}
                           for k in KINDS},
                "top_rules": [{"rule": r, "lines": round(g, 1), "variants": self.rules.tried.get(r, 0)}
                              for r, g in top]}
