"""The options of `run`, `exec` and `generate`: declared once for click, parsed once into one frozen record (RunOptions) that goes down to the pipeline unchanged."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from eqsat_test.runners.cli import measure
from eqsat_test.runners.records import MINIMIZE_SECONDS

if TYPE_CHECKING:
    from eqsat_test.rewrite.generate import GenerateOptions
    from eqsat_test.runners.pipeline import ExecOptions

# Imports inside functions: `--help` and usage errors stay fast, and `exec` never imports egglog (the
# generation side) on a host without it.

_SWEEP_DTYPES = ("float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")  # = sweeps.DEFAULT_DTYPES
_SWEEP_SIZES = (0, 1, 7, 8, 9, 15, 16, 17, 18, 31, 32, 33, 63, 64, 65, 127, 128, 129)  # = sweeps.DEFAULT_SIZES
INPUT_KINDS = ("given", "random", "special", "huge", "domain")  # = oracle.inputs.KINDS
_DEFAULT_BATCH = "auto"  # variants per compile by graph size (runners/exec/batch.py); see benchmarks/throughput.py
_NAMED_BACKENDS = ("inductor", "inductor-max-autotune", "inductor-reduce-overhead", "inductor-dynamic")


def gen_options(f):
    for opt in reversed([
        click.option("--variants", "-n", default=32, show_default=True, type=click.IntRange(min=1),
                     help="Distinct variants to generate."),
        click.option("--rules", "-r", "rules", multiple=True, help="Rule set name, file or folder (repeatable; default: the built-in library)."),
        click.option("--seed", default=0, show_default=True, help="Seed for models, sampling and input sets."),
        click.option("--iterations", default=8, show_default=True, help="Saturation budget: iterations."),
        click.option("--max-enodes", default=50_000, show_default=True, help="Saturation budget: e-nodes."),
        click.option("--sat-seconds", default=10.0, show_default=True, help="Saturation budget: seconds per graph."),
        click.option("--mode", "modes", multiple=True, type=click.Choice(["uniform", "near-original", "guided"]),
                     help="Extraction mode(s) (default: uniform and near-original, alternating); guided (run only): "
                          "drawn in rounds towards rewrites that reached new compiler lines (implies --coverage)."),
        click.option("--sizes", "size_policy", type=click.Choice(["test", "given"]), default="test", show_default=True,
                     help="test: scale the model file's free sizes down until every input has at most "
                          "--max-elements elements (validated eagerly; the size used is in the results); "
                          "given: the file's own sizes."),
        click.option("--max-elements", default=2 ** 18, show_default=True, type=click.IntRange(min=1),
                     help="The test size's bound on the element count of each input, parameter and buffer."),
        click.option("--allow-unsound-rules", is_flag=True,
                     help="Use your own rules that fail their quick check at load (default: left out, and said so)."),
    ]):
        f = opt(f)
    return f


def exec_options(f):
    for opt in reversed([
        click.option("--backend", "-b", "backends", multiple=True, help="inductor (default), eager, aot_eager, cudagraphs, inductor-max-autotune, inductor-reduce-overhead, inductor-dynamic, inductor+CONFIG=VALUE,..., or any torch.compile backend callable as FILE.py:FN or module:FN (repeatable)."),
        click.option("--device", "-d", "devices", multiple=True, type=click.Choice(["cpu", "cuda"]), help="cpu (default) and/or cuda (repeatable)."),
        click.option("--timeout", default=300.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
                     help="Seconds per variant task (compile included)."),
        click.option("--time-budget", default=None, type=click.FloatRange(min=0, min_open=True),
                     help="Seconds from the start, loading and capturing the model included: no stage or task "
                          "starts after this long (a task running then finishes, within --timeout) and the run "
                          "reports what it did; spent before any task ran: exit code 2."),
        click.option("--no-confirm", is_flag=True,
                     help="Claim candidates without re-running each alone from its repro.py first."),
        click.option("--jobs", "-j", default=None, type=int, help="Worker processes (default: one per core)."),
        click.option("--batch", "batch", default=None,
                     help="Compile this many variants of a graph as one program; every variant that is not a clean "
                          "match is re-run alone and judged there. 'auto' (default): by graph size (small graphs "
                          "gain, big ones do not); 1: off."),
        click.option("--inputs", "input_kinds", default=",".join(INPUT_KINDS), show_default=True,
                     help=f"Input sets: {', '.join(INPUT_KINDS)} (docs/running.md)."),
        click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout; everything else on stderr."),
        click.option("--no-minimize", "no_minimize", is_flag=True, help="Report findings without shrinking them first."),
        click.option("--minimize-known", "minimize_known", is_flag=True,
                     help="Also shrink crashes that match a ledger entry (by default their minimal repro is "
                          "the ledger's, in docs/bugs/)."),
        click.option("--minimize-checks", default=12, show_default=True, help="Subprocess checks per finding when minimizing."),
        click.option("--minimize-seconds", type=float, default=MINIMIZE_SECONDS, show_default=True,
                     help="Wall budget of the run's minimization; checks stop there and the smallest failing programs "
                          "so far stand."),
        click.option("--configs", "configs_spec", default=None, help="Also compile under these Inductor configurations and report config-mismatch: "
                     "'default', 'all', names (no-loop-ordering, no-epilogue-fusion, no-vectorize, ...) or KEY=VALUE, comma-separated."),
        click.option("--perf", is_flag=True, help="Time compiled variants (warm, median) and report slow-variant notes (confirmed A/B)."),
        click.option("--perf-threshold", default=3.0, show_default=True, help="slow-variant: x slower than the siblings' median."),
        click.option("--artifacts/--no-artifacts", "artifacts", default=False, show_default=True,
                     help="After the summary, collect the findings' debug artifacts (output code, FX graph, minifier, "
                          "bisector); off: one line says how (`eqsat-test artifacts OUT/findings/ID`)."),
        click.option("--artifacts-max", default=4, show_default=True, help="Findings that get the debug rerun."),
        click.option("--artifacts-timeout", default=180.0, show_default=True, help="Seconds per debug step (rerun, minifier, bisector)."),
        click.option("--bisect", "bisect", type=click.Choice(["accuracy", "all", "none"]), default="accuracy", show_default=True,
                     help="Which findings the debug rerun runs the compiler bisector on (accuracy: silent wrong outputs)."),
        click.option("--dtypes", "sweep_dtypes", default=",".join(_SWEEP_DTYPES), show_default=True,
                     help="Dtype sweep: also run each program with its float inputs in these dtypes (where it runs eagerly); 'none' to skip."),
        click.option("--sweep-sizes", "sweep_sizes", default=",".join(map(str, _SWEEP_SIZES)), show_default=True,
                     help="Size sweep: resize the inputs' free dims to these sizes (static and dynamic=True); 'none' to skip."),
        click.option("--sweep-points", default=2, show_default=True,
                     help="Sweep points per variant (the seed gets every point); 0: sweep the seeds only."),
        click.option("--sweep-dynamic", type=click.Choice(["seed", "all", "none"]), default="seed", show_default=True,
                     help="Which programs get the dynamic=True sweep (one compile called with many sizes)."),
        click.option("--no-sweep", is_flag=True, help="No dtype/size sweeps: only the model file's own dtypes and sizes."),
        click.option("--grad", is_flag=True, help="Training mode: the model in train(), each program run forward and backward, "
                     "gradients of every input and parameter judged too (grad-miscompile); sweeps stay forward-only."),
        click.option("--coverage", is_flag=True, help="Measurement: record the lines of torch/_inductor, _functorch, "
                     "_decomp, _refs each task reaches (caches off, no batches): stats.compiler_lines in results.json."),
    ]):
        f = opt(f)
    return f


@dataclass(frozen=True)
class RunOptions:
    """What one command line asks for, parsed once (`parse_options`) and handed down as it is: a model's run
    only sets where its time budget ends (`started`), and guided extraction its guide (runners/cli/measure.py)."""

    execution: ExecOptions | None = None  # how the bundle runs (`run`, `exec`); the pipeline takes it whole
    generation: GenerateOptions | None = None  # how the variants are made (`run`, `generate`)
    as_json: bool = False  # one JSON object on stdout
    guide_memory: str | None = None  # --mode guided: a file of rules' credit read first and added to after

    def started(self, t0: float) -> RunOptions:
        """The options of a run that started at `t0` (time.monotonic()): --time-budget counts from there, the
        model's loading and capture included, and generation and execution stop at the same end."""
        assert self.execution is not None and self.generation is not None  # (`run`)
        eo = self.execution.started(t0)
        return dataclasses.replace(self, execution=eo,
                                   generation=dataclasses.replace(self.generation, deadline=eo.deadline))


def parse_options(params: Mapping[str, Any]) -> RunOptions:
    """A command's options (click's parameters by name, as `gen_options` and `exec_options` declare them) as
    one record: the execution half where the command has --backend, the generation half where it has
    --variants. A bad option is a usage error, raised before any work; the checks that need no torch first."""
    modes = tuple(params.get("modes") or ())
    if "guided" in modes and "backends" not in params:
        raise click.UsageError("--mode guided draws variants as their results come: it needs `eqsat-test run`")
    execution = _execution(params, guided="guided" in modes) if "backends" in params else None
    generation = _generation(params) if "variants" in params else None
    return RunOptions(execution=execution, generation=generation, as_json=bool(params.get("as_json")),
                      guide_memory=params.get("guide_memory"))


def _execution(p: Mapping[str, Any], guided: bool) -> ExecOptions:
    """--backend ... --coverage -> ExecOptions (runners/pipeline.py)."""
    # the checks that need no torch first: bad options fail fast
    batch = p["batch"] or _DEFAULT_BATCH
    if str(batch) == "auto":
        batch = 0
    elif not str(batch).isdigit() or int(batch) < 1:
        raise click.UsageError(f"--batch: 'auto' or a whole number of at least 1, not {batch!r}")
    kinds = tuple(k.strip() for k in p["input_kinds"].split(",") if k.strip())
    bad = set(kinds) - set(INPUT_KINDS)
    if bad or not kinds:
        raise click.UsageError(f"--inputs: unknown input set kind(s) {sorted(bad)}; use {', '.join(INPUT_KINDS)}")
    if p["minimize_seconds"] <= 0:
        raise click.UsageError(f"--minimize-seconds: a positive number of seconds, not {p['minimize_seconds']:g}")
    from eqsat_test.runners.findings.artifacts import ArtifactOptions
    from eqsat_test.runners.pipeline import ExecOptions
    sweep = _sweep(p["timeout"], p["sweep_dtypes"], p["sweep_sizes"], p["sweep_points"], p["sweep_dynamic"],
                   p["no_sweep"])
    from eqsat_test.runners.protocol import absolute_backend, cpu_cores  # start-up time: only when running
    backends = tuple(absolute_backend(b) for b in p["backends"]) or ("inductor",)  # FILE.py:FN from any folder
    for b in backends:
        _check_backend(b)
    devices = tuple(p["devices"]) or ("cpu",)
    if "cuda" in devices:
        import torch
        if not torch.cuda.is_available():
            raise click.UsageError("--device cuda: no CUDA GPU is available on this machine")
    configs, overrides = _configs(p["configs_spec"], backends[0])
    jobs = p["jobs"] or cpu_cores()
    art = ArtifactOptions(max_findings=p["artifacts_max"], timeout=p["artifacts_timeout"],
                          minifier_timeout=p["artifacts_timeout"], bisect=p["bisect"],
                          bisect_timeout=p["artifacts_timeout"], jobs=jobs) if p["artifacts"] else None
    eo = ExecOptions(backends=backends + tuple(b for b in configs if b not in backends), devices=devices,
                     timeout=p["timeout"], time_budget=p["time_budget"], confirm=not p["no_confirm"], jobs=jobs,
                     seed=p["seed"], input_kinds=kinds, progress=True,
                     minimize=not p["no_minimize"] and p["minimize_checks"] > 0, minimize_checks=p["minimize_checks"],
                     sweep=sweep, batch=int(batch), grad=p["grad"], minimize_seconds=p["minimize_seconds"],
                     minimize_known=p["minimize_known"], configs=configs, config_overrides=overrides,
                     perf=p["perf"], perf_threshold=p["perf_threshold"], artifacts=art)
    # measurement modes (runners/cli/measure.py); --mode guided feeds on the lines each variant reaches
    return measure.coverage_on(eo) if p["coverage"] or guided else eo


def _generation(p: Mapping[str, Any]) -> GenerateOptions:
    """--variants ... --allow-unsound-rules, and --grad -> GenerateOptions (rewrite/generate.py)."""
    from eqsat_test.rewrite.generate import GenerateOptions
    from eqsat_test.rewrite.saturate import Budget
    from eqsat_test.runners.cli.userrules import check_user_rules  # imports the rule checker (torch)
    rules = tuple(p["rules"])
    return GenerateOptions(variants=p["variants"], rules=rules, seed=p["seed"],
                           budget=Budget(iterations=p["iterations"], max_enodes=p["max_enodes"],
                                         seconds=p["sat_seconds"]),
                           modes=tuple(p["modes"]) or ("uniform", "near-original"),
                           sizes=p["size_policy"], max_elements=p["max_elements"],
                           # training mode: the model in train(), rules that keep gradients
                           train=bool(p.get("grad")),
                           left_out=check_user_rules(rules, p["allow_unsound_rules"], _log))


def _sweep(timeout, sweep_dtypes, sweep_sizes, sweep_points, sweep_dynamic, no_sweep):
    """--dtypes/--sweep-sizes/--sweep-points/--sweep-dynamic/--no-sweep -> ExecOptions.sweep (runners/checks/sweeps.py)."""
    from eqsat_test.runners.checks.sweep_plan import SweepConfig, parse_dtypes, parse_sizes
    if no_sweep:
        return None
    try:
        dtypes, sizes = parse_dtypes(sweep_dtypes), parse_sizes(sweep_sizes)
    except ValueError as e:
        raise click.UsageError(f"--dtypes/--sweep-sizes: {e}") from e
    if not dtypes and not sizes:
        return None
    return SweepConfig(dtypes=dtypes, sizes=sizes, points=sweep_points, dynamic=sweep_dynamic,
                       seconds=max(10.0, 0.5 * timeout))


def _configs(spec: str | None, backend: str) -> tuple[dict, dict]:
    """--configs -> ({backend spec: config name}, {config name: Inductor overrides}) (runners/checks/configs.py)."""
    if not spec:
        return {}, {}
    from eqsat_test.runners.checks.configs import ConfigError, configured_backends, parse
    try:
        overrides = parse(spec)
        return configured_backends(backend, overrides), overrides
    except ConfigError as e:
        raise click.UsageError(str(e)) from e


def _check_backend(spec: str) -> None:
    """A backend spec that names nothing this torch knows is a usage error, before any work."""
    from eqsat_test.runners.protocol import compile_options, load_backend
    if ":" in spec and "+" not in spec:
        try:
            load_backend(spec)
        except Exception as e:  # noqa: BLE001 - whatever importing the user's file raised
            raise click.UsageError(f"--backend {spec}: cannot load it: {type(e).__name__}: {e}") from None
        return
    import torch._dynamo  # start-up time: only once a backend is named
    name, opts = compile_options(spec)
    known = set(torch._dynamo.list_backends(exclude_tags=())) | set(_NAMED_BACKENDS)
    if name not in known:
        raise click.UsageError(f"--backend {spec}: unknown backend {name!r}; known: {', '.join(sorted(known))}, "
                               f"or FILE.py:FN / module:FN")
    if opts.get("options"):
        import torch._inductor.config as cfg
        missing = [k for k in opts["options"] if k not in cfg.get_config_copy()]
        if missing:
            raise click.UsageError(f"--backend {spec}: no Inductor config named {', '.join(missing)}")


def _log(msg: str) -> None:
    click.echo(f"eqsat-test: {msg}", err=True)
