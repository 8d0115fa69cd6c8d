"""Draft upstream reports: for each root cause of a hunt that matches no ledger entry, OUT/issues/NN-<ops>/ with a pasteable minimal repro (the minimized program, its inputs inline where small), its output when run here, and ISSUE.md in PyTorch's bug-report form (title, repro, expected vs actual, the compiler bisector's verdict, versions from collect_env)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from eqsat_test.runners.findings.meta import FindingMeta, MetaContext, read_meta

# Imports inside functions: torch (reading a finding's inputs) and the store only where a report is drafted.

ISSUES_DIR = "issues"
INLINE_ELEMENTS = 512  # inputs up to this many elements in all are written into the repro; more: inputs.pt beside it
RUN_SECONDS = 300.0


def draft_issues(store, out: Path, run: bool = True) -> list[Path]:
    """ISSUE.md (and repro.py) for every root cause in the store with a repro that matches no ledger entry now
    (new_root_cause); existing drafts are kept (a resumed hunt drafts only the new ones). Returns the ISSUE.md paths."""
    from eqsat_test.runners.campaign.hunt_programs import ProgramTable  # (the programs' seeds, for the report)
    from eqsat_test.runners.findings.ledger import load_ledger  # (the ledger as it is now)
    programs = ProgramTable(store).by_path()
    sightings = store.cluster_sightings()
    ledger = load_ledger()
    made = []
    new = [c for c in store.clusters() if c.repro and Path(c.repro).is_file() and new_root_cause(c, ledger)]
    for n, c in enumerate(new, 1):
        folder = Path(out) / ISSUES_DIR / f"{n:02d}-{_slug(c)}"
        if (folder / "ISSUE.md").is_file():
            made.append(folder / "ISSUE.md")
            continue
        seen = [s for k in (c.key, *c.absorbed) for s in sightings.get(k) or []]
        hunt = [programs[s["model"]] for s in seen if s.get("model") in programs]
        made.append(write_issue(c, Path(c.repro).parent, folder, hunt, run=run))
    return made


def ledger_ids_now(c, ledger) -> tuple[int, ...]:
    """The ledger entries the cluster's representative finding (its meta.json) matches as the ledger is now, or the
    cluster's as recorded where the finding's file is gone: entries added, or matching made stricter, since the
    hunt judged it count."""
    from eqsat_test.runners.findings.ledger import ledger_matches  # (matching by op, device, side)
    meta = _meta(Path(c.repro).parent) if c.repro else None
    if meta is None:
        return tuple(c.ledger)
    f = meta.finding
    if c.raw_ops:  # the cluster's pattern, as clustering matched it: not every op of an unminimized program
        f = f.with_(min_ops=tuple(c.raw_ops), ops=tuple(c.raw_ops))
    return tuple(sorted({e.id for e in ledger_matches(f, ledger)}))


def new_root_cause(c, ledger) -> bool:
    return not ledger_ids_now(c, ledger)


def _slug(c) -> str:
    ops = "-".join(c.pattern[:3]) or c.kind
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{ops}-{c.device}")[:60]


def write_issue(c, finding: Path, folder: Path, hunt: list[dict], run: bool = True) -> Path:
    """One draft: folder/repro.py (pasteable), the finding's files beside it, folder/ISSUE.md."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = _meta(finding)
    for name in ("repro.py", "minimized.py", "variant.py", "inputs.pt", "bisect.txt", "meta.json", "output_code.py"):
        if (finding / name).is_file():
            shutil.copy(finding / name, folder / ("eqsat_repro.py" if name == "repro.py" else name))
    program = finding / "minimized.py" if (finding / "minimized.py").is_file() else finding / "variant.py"
    script, inline = pasteable_repro(program, finding / "inputs.pt", meta)
    (folder / "repro.py").write_text(script)
    if not inline and (finding / "inputs.pt").is_file():
        shutil.copy(finding / "inputs.pt", folder / "inputs.pt")
    output = _run(folder) if run else "(not run)"
    text = issue_text(c, meta, script, output, (finding / "bisect.txt").read_text() if (finding / "bisect.txt").is_file()
                      else "", hunt, inline)
    (folder / "ISSUE.md").write_text(text)
    return folder / "ISSUE.md"


def _meta(folder: Path) -> FindingMeta | None:
    """The finding folder's meta.json as records; None where it is missing or unreadable."""
    try:
        return read_meta(folder)
    except (OSError, ValueError, TypeError):
        return None


def _compile_call(backend: str) -> str:
    from eqsat_test.runners.protocol import compile_options  # (the backend spec's torch.compile options)
    name, opts = compile_options(backend or "inductor")
    args = [f"backend={name!r}" if isinstance(name, str) else "backend=BACKEND"]
    args += [f"{k}={v!r}" for k, v in opts.items()]
    return f"torch.compile(forward, {', '.join(args)})"


def pasteable_repro(program: Path, inputs_pt: Path, meta: FindingMeta | None) -> tuple[str, bool]:
    """A script needing only torch: the program's module text (its file reading left out), its inputs written
    inline when they are small (else read from inputs.pt beside it), eager, compiled and float64 runs compared
    element by element; exits 1 where compiled disagrees beyond rounding. (script, inputs inline)."""
    src = program.read_text()
    body = src.split("\ndef get_inputs(", 1)[0]
    body = _drop_blocks(body, ("def index_sources(", "class Model(", "INPUTS_FILE", "INPUT_NAMES", "DEVICE =",
                               "from pathlib import Path", "# "))
    f = meta.finding if meta else None
    device = (f.device if f else None) or "cpu"
    body = body.replace("import torch\n", f"import torch\n\nDEVICE = torch.device({device!r})\n\n", 1)
    literal = _inputs_literal(inputs_pt) or _given_inputs(src, meta)
    inputs = literal if literal is not None else \
        'inputs = torch.load(__import__("pathlib").Path(__file__).with_name("inputs.pt"), weights_only=True)'

    tail = f'''

{inputs}
inputs = [x.to({device!r}) if isinstance(x, torch.Tensor) else x for x in inputs]


def _clone(xs):
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


with torch.no_grad():
    eager = forward(*_clone(inputs))
    compiled = {_compile_call(str((f.backend if f else None) or "inductor"))}(*_clone(inputs))
    fp64 = forward(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in _clone(inputs)])
print("torch", torch.__version__)
bad = 0
for i, (e, c, r) in enumerate(zip(eager, compiled, fp64)):
    if not isinstance(e, torch.Tensor):
        continue
    if e.dtype != c.dtype or e.shape != c.shape:
        print(f"output {{i}}: eager {{e.dtype}}{{list(e.shape)}}, compiled {{c.dtype}}{{list(c.shape)}}")
        bad += 1
        continue
    if e.is_floating_point():  # beyond 8 times eager's error and 16 roundings of the float64 value (or its median)
        eps = torch.finfo(e.dtype).eps
        r = r.double()
        typ = r.abs().nan_to_num(0).median() if r.numel() else 0.0
        err_c, err_e = (c.double() - r).abs(), (e.double() - r).abs()
        ok = (err_c <= 8 * err_e.nan_to_num(0) + 16 * eps * (r.abs() + typ)) | (c.isnan() & (r.isnan() | e.isnan()))
        wrong = ~(ok | (c.double() == r) | (c == e))
    else:
        wrong = c != e
    if wrong.any():
        bad += 1
        k = wrong.flatten().nonzero()[:4].flatten().tolist()
        print(f"output {{i}}: {{int(wrong.sum())}} of {{e.numel()}} elements differ, e.g. at flat index {{k}}")
        print("  eager   ", e.flatten()[k].tolist())
        print("  compiled", c.flatten()[k].tolist())
        print("  float64 ", r.flatten()[k].tolist())
print("MISMATCH" if bad else "no difference")
raise SystemExit(1 if bad else 0)
'''
    return body.rstrip() + "\n" + tail, literal is not None


def _given_inputs(program_src: str, meta: FindingMeta | None) -> str | None:
    """Where the failing inputs are the model file's own (input set "given", sizes as written) and every argument of
    the program's forward names one of them (`l_x0_`: x0), the file's get_inputs() itself, which makes them again
    from its seeds: a few lines instead of thousands of numbers."""
    if meta is None or (meta.finding.min_input_set or meta.finding.input_set) != "given" or \
            (meta.context.sizes or {}).get("scaled"):
        return None
    m = re.search(r"^def forward\(([^)]*)\)", program_src, re.M)
    model = Path(str(meta.context.model or ""))
    if not m or not model.is_file():
        return None
    args = [a.strip() for a in m.group(1).split(",") if a.strip()]
    names = [re.fullmatch(r"l_(\w+?)_", a) for a in args]
    model_src = model.read_text()
    get = re.search(r"^def get_inputs\(\):\n(?:    .*\n|\n)*", model_src, re.M)
    ret = re.search(r"^    return \[(.*)\]$", get.group(0), re.M) if get else None
    if not get or not ret or not all(names):
        return None
    given = [n.strip() for n in ret.group(1).split(",")]
    if not all(n and n.group(1) in given for n in names):
        return None
    picks = ", ".join(f"_given[{n.group(1)!r}]" for n in names if n)
    return (f"{get.group(0).rstrip()}\n\n\n_given = dict(zip({given!r}, get_inputs()))  # {model.name}'s own inputs\n"
            f"inputs = [{picks}]")


def _drop_blocks(text: str, starts: tuple[str, ...]) -> str:
    """The module text without its top-level lines (and their indented blocks) that begin with one of `starts`."""
    out, skipping = [], False
    for ln in text.splitlines():
        if ln and not ln[0].isspace():
            skipping = ln.startswith(starts)
        if not skipping:
            out.append(ln)
    return re.sub(r"\n{3,}", "\n\n\n", "\n".join(out)).strip() + "\n"


def _inputs_literal(inputs_pt: Path) -> str | None:
    """`inputs = [...]` with every tensor written out, when they have at most INLINE_ELEMENTS elements in all."""
    import torch  # (reading the finding's inputs)
    try:
        xs = torch.load(inputs_pt, weights_only=True)
    except Exception:  # noqa: BLE001 - unreadable or missing: the script reads the file instead
        return None
    if not isinstance(xs, (list, tuple)):
        return None
    if sum(x.numel() for x in xs if isinstance(x, torch.Tensor)) > INLINE_ELEMENTS:
        return None
    parts = []
    for x in xs:
        if not isinstance(x, torch.Tensor):
            parts.append(repr(x))
            continue
        vals = repr(x.detach().cpu().double().tolist() if x.is_floating_point() else x.detach().cpu().tolist())
        vals = vals.replace("nan", "float('nan')").replace("inf", "float('inf')")
        parts.append(f"torch.tensor({vals}, dtype={x.dtype})")  # (values only: a strided input comes contiguous)
    return "inputs = [\n" + "".join(f"    {p},\n" for p in parts) + "]"


def _run(folder: Path) -> str:
    try:
        r = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True,
                           timeout=RUN_SECONDS)
        out = (r.stdout + r.stderr)[-3000:]
        return f"{out.rstrip()}\n(exit code {r.returncode})"
    except subprocess.TimeoutExpired:
        return f"(repro.py did not finish in {RUN_SECONDS:g} s)"



def _origin(h: dict) -> str:
    """Where a hunt's program came from, for a report: a window names the model file it was cut from, a
    generated program its seed."""
    rec = h.get("record") or {}
    if rec.get("kind") == "window":
        return (f"a window of {rec.get('source', '?')} (graph {rec.get('graph', '?')}, seed {h['seed']}, "
                f"{rec.get('version', '?')})")
    return f"generated program seed {h['seed']} (generator {rec.get('version', '?')})"

def issue_text(c, meta: FindingMeta | None, script: str, output: str, bisect: str, hunt: list[dict], inline: bool) -> str:
    """ISSUE.md: PyTorch's bug-report form, filled from the cluster and its representative finding."""
    f, context = (meta.finding, meta.context) if meta else (None, MetaContext())
    triage = (f.triage_info if f else None) or {}
    labels = ", ".join(triage.get("labels") or [])
    ops = ", ".join(c.pattern) or "(no ops recorded)"
    where = f"{c.backend} on {c.device}"
    title = f"[{where}] {c.symptom}: {ops} ({c.input_class})"
    referee = (f.referee_line if f else None) or ""
    min_detail = f.min_detail if f else None
    detail = min_detail or (f.detail if f else None) or c.detail
    found = ("eqsat-test hunt: " + ", ".join(_origin(h) for h in hunt[:5])) if hunt else "eqsat-test"
    seed_note = "the unmodified program fails too" if c.seed_fails else \
        f"only rewritten variants fail (rules: {', '.join(c.rules[:4]) or 'none recorded'})"
    lines = [
        f"# {title}",
        "",
        "### 🐛 Describe the bug",
        "",
        f"`torch.compile` ({where}) returns results that differ from eager on the program below: {c.symptom}, "
        f"{c.input_class}. Found by {found}; {seed_note}; {c.count} sighting(s) in {len(c.variants)} program(s).",
        "",
        "```python",
        script.rstrip(),
        "```",
        "" if inline else "(The inputs are too large to write inline: attach `inputs.pt`, saved with torch.save.)",
        "",
        "**Expected**: compiled equals eager (integers and booleans exactly, floats within rounding), as eager "
        "agrees with a float64 run" + (f" ({referee})" if referee and not min_detail else "") + ".",
        "",
        f"**Actual**: {detail}",
        "",
        "Output of the script here:",
        "",
        "```",
        output.rstrip(),
        "```",
        "",
        "**Compiler bisector** (torch._inductor.compiler_bisector):",
        "",
        "```",
        (bisect.strip() or "not run for this finding"),
        "```",
        "",
        f"Triage: {triage.get('meaning') or c.kind}; component {triage.get('component') or '?'}"
        + (f"; labels: {labels}" if labels else ""),
        "",
        "Upstream search: (fill in: issues searched and what they say)",
        "",
        "### Versions",
        "",
        "```",
        str(context.collect_env or json.dumps(context.versions or {})).rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)
