"""Configuration divergence: compile each variant under several Inductor configurations and report the config that flips a verdict (`config-mismatch`).

Each configuration is a backend spec `BASE+key=value,...` (runners/protocol.py compile_options),
executed like any other backend. The judge step (`config_judge`) then looks, per variant x
device, at every configuration's verdict. Each verdict is already relative to the fp64 eager
reference (Dynamo's accuracy rule, runners/oracle/judge.py), so comparing verdicts compares the
configurations' compiled outputs against the same reference:
- right by default, wrong under config C: `config-mismatch` naming C (the config that
  exposes the bug; the repro compiles with C);
- wrong by default, right under C: `config-mismatch` naming C (the config that hides it: the
  pass or setting C turns off is where to look; the repro compiles with the default);
- wrong under every configuration: the base finding stays, noted as not config-dependent.
Crashes under one configuration stay `compile-crash`/`run-crash` findings of that backend,
with `config` naming it.
"""
from __future__ import annotations

import json

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.records import (
    CRASH_STATUSES,
    Finding,
    FindingKind,
    InputSetVerdict,
    Result,
    ResultStatus,
    as_finding,
    new_finding,
)

# name -> Inductor config overrides. Names must exist in torch._inductor.config (checked at use).
CONFIGS: dict[str, dict] = {
    "no-loop-ordering": {"loop_ordering_after_fusion": False},
    "no-epilogue-fusion": {"epilogue_fusion": False},
    "no-vectorize": {"cpp.simdlen": 1},  # no ISA has width 1: scalar C++ code
    "avx2": {"cpp.simdlen": 256},
    "no-pattern-matcher": {"pattern_matcher": False},
    "no-split-reductions": {"split_reductions": False},
    "no-loop-tail-vec": {"cpp.enable_loop_tail_vec": False},
    "aggressive-fusion": {"aggressive_fusion": True},
    "fallback-random": {"fallback_random": True},
    "emulate-precision-casts": {"emulate_precision_casts": True},
    "max-autotune": {"max_autotune": True},
    "cpp-wrapper": {"cpp_wrapper": True},
    "no-comprehensive-padding": {"comprehensive_padding": False},
}
DEFAULT_SET = ("no-loop-ordering", "no-epilogue-fusion", "no-vectorize", "no-pattern-matcher")
CONFIG_MISMATCH = FindingKind.CONFIG_MISMATCH
_WRONG_KINDS = (FindingKind.MISCOMPILE.value, FindingKind.SEED_MISCOMPILE.value)


class ConfigError(ValueError):
    """An unknown configuration name or a key that torch._inductor.config lacks."""


def config_exists(key: str) -> bool:
    import torch._inductor.config as cfg
    obj = cfg
    for part in key.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def parse(spec: str) -> dict[str, dict]:
    """`--configs` value -> {name: overrides}. Comma-separated items: a name from CONFIGS,
    `default` (DEFAULT_SET), `all`, or a raw `key=value` (value JSON, e.g.
    cpp.inject_relu_bug_TESTING_ONLY="accuracy"); raw items may be joined with `;` into one
    configuration."""
    out: dict[str, dict] = {}
    items = _split(spec)
    for item in items:
        if item == "default":
            out.update({n: CONFIGS[n] for n in DEFAULT_SET})
        elif item == "all":
            out.update(CONFIGS)
        elif item in CONFIGS:
            out[item] = CONFIGS[item]
        elif "=" in item:
            overrides = {}
            for kv in item.split(";"):
                k, _, v = kv.partition("=")
                k = k.strip()
                try:
                    overrides[k] = json.loads(v) if v.strip() else True
                except json.JSONDecodeError:
                    overrides[k] = v.strip()
            out[item] = overrides
        else:
            raise ConfigError(f"--configs: unknown configuration {item!r}; known: default, all, "
                              f"{', '.join(CONFIGS)}, or KEY=VALUE")
    missing = sorted({k for o in out.values() for k in o if not config_exists(k)})
    if missing:
        raise ConfigError(f"--configs: not in torch._inductor.config of this torch: {', '.join(missing)}")
    return out


def _split(spec: str) -> list[str]:
    """Split on commas outside double quotes."""
    items, cur, quoted = [], "", False
    for ch in spec:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    items.append(cur.strip())
    return [i for i in items if i]


def backend_spec(base: str, overrides: dict) -> str:
    """`inductor` + {epilogue_fusion: False} -> `inductor+epilogue_fusion=false` (appended to
    any overrides the base already has)."""
    items = ",".join(f"{k}={json.dumps(v)}" for k, v in overrides.items())
    return f"{base},{items}" if "+" in base else f"{base}+{items}"


def configured_backends(base: str, configs: dict[str, dict]) -> dict[str, str]:
    """{backend spec: config name} for the base backend under each configuration."""
    if not (base == "inductor" or base.startswith(("inductor+", "inductor-"))):
        raise ConfigError(f"--configs: configurations apply to Inductor backends, not {base!r}")
    return {backend_spec(base, o): name for name, o in configs.items()}


def _describe(name: str, configs: dict[str, dict]) -> str:
    o = configs.get(name)
    if not o:
        return name
    kv = ", ".join(f"{k}={v!r}" for k, v in o.items())
    return kv if name == kv or "=" in name else f"{name} ({kv})"


def _verdict(r: Result | None) -> tuple[str, InputSetVerdict | None]:
    """("right" | "wrong" | "crash" | "timeout" | "none", failing input-set entry)."""
    if r is None:
        return "none", None
    st = r.status
    if st == ResultStatus.TIMEOUT:
        return "timeout", None
    if st in CRASH_STATUSES:
        return "crash", None
    if st != ResultStatus.OK:
        return "none", None
    for s in r.input_sets:
        if s.kind == "nondeterministic":
            return "none", None
        if not s.ok:
            return "wrong", s
    return "right", None


def config_judge(manifest: Manifest, results: list[Result], findings: list, base: str,
                 backends: dict[str, str], configs: dict[str, dict]) -> list[Finding]:
    """Findings after the cross-configuration judge: config-mismatch findings added, the
    per-backend miscompile findings they summarize removed. `backends`: {spec: config name}."""
    family = {base, *backends}
    by = {(r.variant, r.device, r.backend): r for r in results}
    keys = sorted({(r.variant, r.device) for r in results if r.backend in family})
    new: list[Finding] = []
    drop: set[tuple] = set()  # (variant, device, backend) miscompile findings summarized
    annotate: dict[tuple, dict] = {}
    # The per-backend finding of the failing side (minimized already, where it was): carried over.
    findings = [as_finding(f) for f in findings]
    prior = {(f.variant, f.device, f.backend): f for f in findings if f.kind in _WRONG_KINDS}
    carry = ("minimized_file", "min_ops", "min_checks", "min_steps", "min_skipped", "failing_inputs",
             "kernel_files", "kernel_source_file")

    def carried(vid: str, dev: str, spec: str) -> dict:
        f = prior.get((vid, dev, spec))
        return {k: getattr(f, k) for k in carry if f is not None and getattr(f, k, None) is not None}

    for vid, dev in keys:
        v = manifest.variant(vid)
        bv, bs = _verdict(by.get((vid, dev, base)))
        verdicts = {spec: _verdict(by.get((vid, dev, spec))) for spec in backends}
        if bv not in ("right", "wrong"):
            continue
        wrong = [s for s, (x, _) in verdicts.items() if x == "wrong"]
        right = [s for s, (x, _) in verdicts.items() if x == "right"]
        common = {"variant": vid, "graph": v.graph, "device": dev, "rules": list(v.rules), "mode": v.mode,
                  "ops": sorted(set(manifest.graph(v.graph).op_names)), "base_backend": base}
        if bv == "right" and wrong:
            for spec in wrong:  # one finding per exposing config: each is its own repro
                s = verdicts[spec][1]
                assert s is not None  # (a wrong verdict names its input set)
                name = backends[spec]
                new.append(new_finding(
                    CONFIG_MISMATCH, common, {"failing_inputs": s.inputs_file}, carried(vid, dev, spec),
                    backend=spec, config=name, config_overrides=configs.get(name, {}),
                    direction="exposed-by-config", input_set=s.name, max_abs_err=s.max_abs_err,
                    max_rel_err=s.max_rel_err, leaf=s.leaf,
                    configs_right=[base] + [backends[x] for x in right],
                    configs_wrong=[backends[x] for x in wrong],
                    detail=f"wrong under {_describe(name, configs)}, right with the default "
                           f"configuration ({base}): {s.detail}"))
                drop.add((vid, dev, spec))
        elif bv == "wrong" and right:
            names = [backends[x] for x in right]
            assert bs is not None  # (a wrong verdict names its input set)
            new.append(new_finding(
                CONFIG_MISMATCH, common, {"failing_inputs": bs.inputs_file}, carried(vid, dev, base),
                backend=base, config=names[0], config_overrides=configs.get(names[0], {}),
                direction="hidden-by-config", input_set=bs.name, max_abs_err=bs.max_abs_err,
                max_rel_err=bs.max_rel_err, leaf=bs.leaf,
                configs_right=names, configs_wrong=[base] + [backends[x] for x in wrong],
                detail=f"wrong with the default configuration ({base}), right under "
                       f"{', '.join(_describe(n, configs) for n in names)}: {bs.detail}"))
            drop.add((vid, dev, base))
            drop.update((vid, dev, x) for x in wrong)
        elif bv == "wrong":
            drop.update((vid, dev, x) for x in wrong)
            annotate[(vid, dev, base)] = {"config_dependent": False,
                                          "configs_also_wrong": [backends[x] for x in wrong],
                                          "sets": {s.name for s in by[(vid, dev, base)].input_sets}}
    # Findings beyond the task's own input sets (dtype/size sweep points): a configuration that
    # fails the same point as the default is not config-dependent there; one finding, annotated.
    base_points = {(f.variant, f.device, f.input_set): f for f in findings
                   if f.kind in _WRONG_KINDS and f.backend == base}
    also: dict[int, set[str]] = {}  # id(a default-configuration finding) -> configurations failing its point too
    for f in findings:
        point = (f.variant, f.device, f.input_set)
        if f.kind in _WRONG_KINDS and f.backend in backends and point in base_points:
            also.setdefault(id(base_points[point]), set()).add(backends[f.backend])
    out = []
    for f in findings:
        key = (f.variant, f.device, f.backend)
        point = (f.variant, f.device, f.input_set)
        if f.kind in _WRONG_KINDS and f.backend in backends and point in base_points:
            continue
        if f.kind in _WRONG_KINDS and key in drop:
            continue
        wrong_too = set(also.get(id(f), ()))
        hit = id(f) in also
        if key in annotate and f.kind in _WRONG_KINDS and f.input_set in annotate[key]["sets"]:
            wrong_too |= set(annotate[key]["configs_also_wrong"])
            hit = True
        if hit:
            f = f.with_(config_dependent=False,
                        configs_also_wrong=sorted(set((f.configs_also_wrong or [])) | wrong_too))
        if f.backend in backends and f.kind in (FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH, FindingKind.TIMEOUT):
            f = f.with_(config=backends[f.backend])
        out.append(f)
    return out + new
