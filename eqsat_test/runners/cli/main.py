"""The `eqsat-test` command line: run, generate, exec, rules, campaign, report; exit codes as pytest."""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

import click

from eqsat_test.runners.cli import measure
from eqsat_test.runners.cli.options import RunOptions, exec_options, gen_options, parse_options
from eqsat_test.runners.cli.precheck import check_bundle, check_model_file, check_out_dir
from eqsat_test.runners.records import ExitCode

if TYPE_CHECKING:
    from eqsat_test.lowering.manifest import Manifest

# Imports inside functions: each command imports what it needs, so `--help` and usage errors
# stay fast and `exec` never imports egglog (the generation side) on a host without it.

COMMANDS = ("run", "generate", "exec", "rules", "campaign", "report", "fuzz", "artifacts")


def _err(msg: str) -> None:
    click.echo(msg, err=True)


class _Group(click.Group):
    """`eqsat-test MODEL.py ...` means `eqsat-test run MODEL.py ...`, options before or after the model."""

    def parse_args(self, ctx, args):
        group_only = {"-h", "--help", "--version"}
        if args and args[0] not in self.commands and args[0] not in group_only:
            if not args[0].startswith("-") or not any(a in self.commands for a in args):
                args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="eqsat-test")
def cli() -> None:
    """Find silent mis-compilations in torch.compile by testing many equivalent variants of a model.

    \b
    eqsat-test MODEL.py            the whole pipeline on one model (same as `run`)
    eqsat-test generate MODEL.py   model -> variant bundle (needs egglog)
    eqsat-test exec BUNDLE         bundle -> verdicts (torch only; e.g. on a GPU host)
    eqsat-test rules list|check|new|stats
    eqsat-test campaign SPEC.toml  many models x rule sets x backends x devices
    eqsat-test report DIR          HTML report of a campaign or run folder
    eqsat-test fuzz --minutes N    hunt: generated programs, judged as a campaign
    eqsat-test artifacts OUT/findings/ID   a finding's output code, minifier, bisector

    Exit codes: 0 nothing found, 1 compiler-bug candidates found, 2 interrupted,
    3 internal error of eqsat-test, 4 usage or bad input.
    """


def _log(msg: str) -> None:
    _err(f"eqsat-test: {msg}")


def _emit(report: dict, manifest: Manifest, out: Path, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report, default=str))
    else:
        from eqsat_test.runners.cli.summary import summary  # start-up time: only after a run
        click.echo(summary(report, manifest, out))


@cli.command()
@click.argument("models", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@gen_options
@exec_options
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: eqsat-out/<model name>; with several model files, OUT/<model name> each).")
@click.option("--guide-memory", type=click.Path(dir_okay=False), default=None, help="--mode guided: a file of rules' credit read first and added to after (campaigns).")
def run(models, out, **params):
    """The whole pipeline on a model file: generate variants, execute, judge, report.

    Several model files run one after another in this one process, on the same warm workers (torch imported and
    Inductor warmed once for all): each its own OUT/<model name>, summary (--json: one line each) and time budget;
    the exit code is the worst of theirs (3, 4, 2, 1, 0)."""
    for m in models:
        check_model_file(m)
    outs = [out or Path("eqsat-out") / models[0].stem] if len(models) == 1 else [
        (out or Path("eqsat-out")) / m.stem for m in models]
    if len(set(outs)) < len(outs):
        raise click.UsageError("several model files of the same name: their output folders would be one")
    for o in outs:
        check_out_dir(o)
    options = parse_options(params)

    def one(model: Path, out: Path) -> int:
        return _run_model(model, out, options)

    if len(models) == 1:
        sys.exit(one(models[0], outs[0]))
    from eqsat_test.runners.cli.many import run_many  # (several model files only)
    sys.exit(run_many(list(zip(models, outs)), one, _log))


def _run_model(model: Path, out: Path, options: RunOptions) -> int:
    """One model file through the whole pipeline; its exit code."""
    t0 = time.monotonic()  # --time-budget counts from here: loading and capturing the model included
    options = options.started(t0)
    eo, go, as_json = options.execution, options.generation, options.as_json
    assert eo is not None and go is not None  # (`run` parses both halves)
    from eqsat_test.lowering.capture import CaptureCrash
    from eqsat_test.rewrite.generate import generate
    from eqsat_test.rewrite.stageclock import BudgetSpent
    from eqsat_test.runners.cli.endings import budget_spent_line, budget_spent_report
    from eqsat_test.runners.exec.pool import prestart
    from eqsat_test.runners.judging import exit_code
    from eqsat_test.runners.pipeline import RunInterrupted, execute_bundle, pool_options

    keep = measure.guided_keep(go.modes)  # --mode guided: graphs' states for later rounds (runners/cli/measure.py)
    try:  # workers start and warm up while the variants are generated
        manifest = generate(model, out / "bundle", go, log=_log, keep=keep,
                            on_loaded=lambda: prestart(pool_options(eo), device=eo.devices[0], log=_log, backend=next(
                                (b for b in eo.backends if b.startswith("inductor")), eo.backends[0])))
    except BudgetSpent as e:
        budget = float(eo.time_budget or 0.0)  # (set: a budget was spent)
        report = budget_spent_report(model, out, e.stage, budget, time.monotonic() - t0)
        _log(budget_spent_line(e.stage, budget, time.monotonic() - t0, out))
        if as_json:
            click.echo(json.dumps(report))
        return ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        raise RunInterrupted(f"interrupted while generating the variants, before any task ran: nothing to save "
                             f"({out / 'bundle'} holds what was written)") from None
    except CaptureCrash as e:  # eager runs the model, torch.compile cannot capture it: a finding of its own
        from eqsat_test.runners.cli.endings import capture_crash_ending  # (a model that cannot be captured only)
        _log(f"{model.name}: {e}")
        return capture_crash_ending(model, out, e.error, eo, go, as_json)
    eo = measure.guided_attach(keep, manifest, out / "bundle", eo, options.guide_memory)
    report = execute_bundle(out / "bundle", out, eo, log=_log)
    measure.guided_finish(eo, options.guide_memory)
    manifest = eo.guide.manifest if eo.guide is not None else manifest  # with the guided rounds' variants
    # generation stages are wall seconds; task stages are summed over the workers (they overlap)
    report["stats"]["timings"] = {"generate_wall": manifest.timings,
                                  "tasks_summed_over_workers": report["stats"]["exec_timings"]}
    report["stats"]["graphs"] = [{k: d.get(k) for k in ("id", "ops", "saturation", "extraction", "skipped_rewrites")}
                                 for d in manifest.to_dict()["graphs"]]
    report["stats"]["rules_fired"] = manifest.rules.fired
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    _emit(report, manifest, out, as_json)
    after_summary(report, out, eo.artifacts)  # debug artifacts: collected now when asked, else a hint
    return exit_code(report)


@cli.command(name="generate")
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@gen_options
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Bundle folder to write (default: eqsat-out/<model name>/bundle, where `run` keeps its bundle).")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON on stdout.")
@click.option("--grad", is_flag=True, help="For training mode (exec --grad): the model in train(), rules that keep gradients.")
def generate_cmd(model, out, **params):
    """Model file -> variant bundle (standalone modules + inputs + manifest.json)."""
    check_model_file(model)
    out = out or Path("eqsat-out") / model.stem / "bundle"
    check_out_dir(out)
    from eqsat_test.rewrite.generate import generate
    options = parse_options(params)
    assert options.generation is not None  # (--variants ...)
    manifest = generate(model, out, options.generation, log=_log)
    if options.as_json:
        click.echo(json.dumps(manifest.to_dict(), default=str))
    else:
        click.echo(f"wrote bundle {out}: {len(manifest.graphs)} graph(s), {manifest.rewritten_count} variants + seeds")


@cli.command(name="exec")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True, path_type=Path))
@exec_options
@click.option("--seed", default=0, show_default=True, help="Seed for the extra input sets.")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: BUNDLE-results beside the bundle: bundle/ -> bundle-results/).")
def exec_cmd(bundle, out, **params):
    """Bundle -> verdicts and findings. Needs only torch (no egglog)."""
    check_bundle(bundle)
    out = out or exec_out(bundle)
    check_out_dir(out)
    options = parse_options(params)
    eo = options.execution
    assert eo is not None  # (--backend ...)
    from eqsat_test.runners.judging import exit_code
    from eqsat_test.runners.pipeline import execute_bundle, read_manifest
    report = execute_bundle(bundle, out, eo, log=_log)
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    _emit(report, read_manifest(bundle), out, options.as_json)
    after_summary(report, out, eo.artifacts)  # debug artifacts: collected now when asked, else a hint
    sys.exit(exit_code(report))


def exec_out(bundle: Path) -> Path:
    """`exec`'s output folder when --out is not given (its --help says so)."""
    b = bundle if bundle.name else Path(os.path.abspath(bundle))  # ("." has no name)
    return b.parent / f"{b.name}-results"


@cli.group()
def rules() -> None:
    """List, check, scaffold and measure rewrite rules."""


def _rule_rows(specs):
    from eqsat_test.rewrite.compile_rules import compile_rules
    from eqsat_test.rewrite.ruledsl import load_rules
    rs = load_rules(list(specs) or None)
    compiled, errors = compile_rules(rs)
    ops: dict[str, set] = {}
    for c in compiled:
        ops.setdefault(c.name, set()).update(c.ops())
    rows = [{"name": r.name, "family": r.family, "numerics": r.numerics, "bidirectional": r.bidirectional,
             "ops": sorted(ops.get(r.name, ())), "source": r.source, "tags": list(r.tags)} for r in rs]
    return rows, errors


@rules.command(name="list")
@click.argument("specs", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
def rules_list(specs, as_json):
    """Every rule: name, family, numerics class, ops involved (SPECS: names, files or folders)."""
    rows, errors = _rule_rows(specs)
    all_ops = sorted(set().union(*[set(r["ops"]) for r in rows])) if rows else []
    families = sorted({r["family"] for r in rows})
    if as_json:
        click.echo(json.dumps({"rules": rows, "count": len(rows), "families": families,
                               "ops": all_ops, "op_count": len(all_ops), "errors": errors}))
        return
    for r in rows:
        arrow = "<->" if r["bidirectional"] else "->"
        click.echo(f"{r['name']:<40} {r['family']:<12} {r['numerics']:<12} {arrow:<4} {', '.join(r['ops'])}")
    click.echo(f"{len(rows)} rules, {len(families)} families, {len(all_ops)} ops")
    for e in errors:
        _err(f"eqsat-test: rule error: {e}")


@rules.command(name="check")
@click.argument("specs", nargs=-1)
@click.option("--seed", default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
@click.option("--grad", is_flag=True, help="Also measure each rule's gradient class (exact, edge, different) and fail "
              "false `grad=` declarations; with --record, write the built-in rules' classes (rules/_grad_classes.json).")
@click.option("--record", is_flag=True, help="With --grad: record the measured classes.")
def rules_check(specs, seed, as_json, grad, record):
    """Sample each rule over dtypes, shapes and special values; fail rules whose numerics class is false.

    SPECS are rule names, rule files, folders or built-in rule set names (default: the whole library)."""
    from eqsat_test.rewrite.rulecheck import check_rules
    from eqsat_test.rewrite.ruledsl import load_rules
    names = [s for s in specs if not Path(s).exists()]
    paths = [s for s in specs if Path(s).exists()]
    rs = load_rules(paths or None) if paths or not names else load_rules(None)
    if names:
        from eqsat_test.rewrite.ruledsl import BUILTIN_RULES_DIR, rule_files
        builtin_sets = {f.stem for f in rule_files(BUILTIN_RULES_DIR)}
        sets = [n for n in names if n in builtin_sets]
        wanted = set(names) - set(sets)
        rs = ([r for r in rs if r.name in wanted] if wanted else []) + (load_rules(sets) if sets else [])
        missing = wanted - {r.name for r in rs}
        if missing:
            raise click.UsageError(f"no rule named {', '.join(sorted(missing))}")
    results = check_rules(rs, seed=seed)
    from eqsat_test.rewrite.rulegrad import check_grads  # training mode's gradient classes
    grads = check_grads(rs, seed=seed, record=record) if grad else []
    failed = [r for r in results if not r.ok] + [g for g in grads if not g.ok]
    if as_json:
        click.echo(json.dumps({"checked": len(results), "failed": len(failed), "results": [r.__dict__ for r in results],
                               "grad": [g.to_dict() for g in grads]}, default=str))
    else:
        for r in results:
            status = "ok  " if r.ok else "FAIL"
            click.echo(f"{status} {r.rule:<40} {r.claimed:<12} {r.samples} samples")
            if not r.ok:
                click.echo("     " + str(r.counterexample).replace("\n", "\n     "))
            elif getattr(r, "note", None):
                click.echo(f"     note: {r.note}")
        for g in grads:
            click.echo(g.line())
        click.echo(f"{len(results) + len(grads) - len(failed)} passed, {len(failed)} failed")
    sys.exit(ExitCode.FOUND if failed else ExitCode.OK)


@rules.command(name="new")
@click.argument("name")
@click.option("--dir", "dest", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
@click.option("--family", default="misc", show_default=True)
def rules_new(name, dest, family):
    """Scaffold a rule file NAME.py and its test in --dir."""
    from eqsat_test.rewrite.ruleauthor import new_rule
    for f in new_rule(name, dest, family=family):
        click.echo(f"wrote {f}")
    click.echo(f"next: edit {dest / (name + '.py')}, then `eqsat-test rules check {dest / (name + '.py')}` "
               f"and `eqsat-test MODEL.py --rules {dest}`")


@rules.command(name="coverage")
@click.argument("models", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--rules", "-r", "specs", multiple=True, help="Rule set name, file or folder (default: the library).")
@click.option("--variants", "-n", default=32, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
def rules_coverage(models, specs, variants, as_json):
    """Per model: its ops, the ops no rule touches, and how many distinct variants the e-graph gives."""
    import dataclasses

    from eqsat_test.rewrite.coverage import coverage, load_compiled
    compiled = load_compiled(list(specs) or None)
    rows = [coverage(m, variants=variants, compiled=compiled) for m in models]
    if as_json:
        click.echo(json.dumps([{**dataclasses.asdict(c), "untouched": c.untouched} for c in rows], default=str))
        return
    for c in rows:
        if c.error:
            click.echo(f"{c.model}: not covered: {c.error}")
            continue
        for g in c.graphs:
            ops = ", ".join(f"{k.rsplit('.', 1)[-1]}x{v}" if v > 1 else k.rsplit('.', 1)[-1] for k, v in g.ops.items())
            click.echo(f"{c.model} g{g.index}: {g.num_ops} ops ({ops}); {g.distinct_variants}/{g.asked} distinct variants; "
                       f"families: {', '.join(g.families_fired) or '-'}")
            if g.untouched:
                click.echo(f"  no rule touches: {', '.join(g.untouched)}")


@rules.command(name="stats")
@click.argument("out", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
def rules_stats(out, as_json):
    """How often each rule fired and how many findings it took part in, for a run or campaign folder."""
    from eqsat_test.runners.campaign.rulestats import rule_stats
    rows = rule_stats(out)
    if as_json:
        click.echo(json.dumps(rows))
        return
    click.echo(f"{'rule':<40} {'fired':>8} {'variants':>9} {'findings':>9} {'unsound':>8}")
    for r in rows:
        click.echo(f"{r['rule']:<40} {r['fired']:>8} {r['variants']:>9} {r['findings']:>9} {r['unsound']:>8}")


from eqsat_test.runners.cli.artifacts import after_summary, artifacts_cmd  # noqa: E402  (imports nothing heavy)
from eqsat_test.runners.cli.campaign import campaign_cmd, report_cmd  # noqa: E402  (imports nothing heavy)
from eqsat_test.runners.cli.fuzz import fuzz_cmd  # noqa: E402  (imports nothing heavy)

cli.add_command(campaign_cmd)
cli.add_command(report_cmd)
cli.add_command(fuzz_cmd)
cli.add_command(artifacts_cmd)


def main(argv=None) -> None:
    """Entry point: maps every outcome to the documented exit codes."""
    from eqsat_test.runners.cli.endings import is_bad_input  # (torch-free: bad input stays fast)
    try:
        cli.main(args=argv, standalone_mode=False)
    except SystemExit as e:
        sys.exit(e.code if isinstance(e.code, int) else ExitCode.OK)
    except (KeyboardInterrupt, click.exceptions.Abort) as e:  # pipeline.RunInterrupted says what it saved where
        saved = getattr(e, "saved", None) or getattr(e.__cause__, "saved", None)  # (click wraps it in Abort)
        _err(f"eqsat-test: {saved or 'interrupted'}")
        sys.exit(ExitCode.INTERRUPTED)
    except click.exceptions.ClickException as e:  # usage errors, bad options
        e.show()
        sys.exit(ExitCode.USAGE)
    except BaseException as e:
        if is_bad_input(e):
            _err(f"eqsat-test: error: {e}")
            sys.exit(ExitCode.USAGE)
        # our bug (a Rust panic from egglog is a BaseException): one line, traceback in a file
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"eqsat-test-crash-{os.getpid()}.txt"
        log.write_text(traceback.format_exc())
        _err(f"eqsat-test: internal error: {type(e).__name__}: {e} (traceback: {log})")
        sys.exit(ExitCode.INTERNAL)
    sys.exit(ExitCode.OK)


if __name__ == "__main__":
    main()
