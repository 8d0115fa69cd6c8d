"""Side by side with PyTorch's torchfuzz: both fuzzers for the same minutes on the same machine and torch, measured
alike (programs judged, CPU seconds, candidates, distinct root causes, and which of those are false).

    python benchmarks/peer_torchfuzz.py --torchfuzz DIR --minutes M --cores N [--device cpu|cuda]
                                        [--mode sequential|parallel] [--out WORK] [--report FILE]

DIR is a copy of `tools/experimental/torchfuzz` from the PyTorch repository (the folder holding `fuzzer.py`); it is
run as a subprocess, never imported. torchfuzz runs as its multi-process fuzzer (`fuzzer.py --start S --count C -p N
-v`: every seed's verdict is printed) and is stopped with SIGINT to its main process after M minutes (its session is
killed 30 s later; seeds in flight are not counted as programs, their CPU seconds are);
eqsat-test runs as `eqsat-test fuzz --minutes M -j N --device D --json --out WORK/eqsat` (it starts no program
after M minutes and lets the running ones finish). `--mode parallel` runs the two at once, each pinned to half the
cores with `taskset` when the machine has 2N cores (else unpinned, and said so); `sequential` runs one after the
other on the same N cores.

Measured per tool: the CPU seconds of its process tree (wait4's rusage of the child and its waited-for descendants,
or, where larger, the last /proc sum over its session, which keeps a tree killed before it was reaped), wall
seconds, programs judged (torchfuzz: seeds that finished, failed or not; eqsat-test: `this_run.judged`), programs
per CPU-hour and per allotted core-hour (N cores times wall). Candidates: torchfuzz's failing seeds (its ignore list
applied), clustered by `failure_signature` (the exception type and the first line of its message, numbers and names
of temporaries masked, or "mismatch" and the op set for its numerics check); a signature is false when the generated
program fails eagerly too, or torchfuzz itself fails before the program runs. eqsat-test: its `candidates`,
`root_causes` (clusters), `ledger_matches` and the share of root causes that only a rewritten variant exposed (a
cluster whose unmodified seed never fails, `seed_fails`).

Only the small report travels: WORK (default: a temporary folder) holds eqsat-test's hunt folder and torchfuzz's
log; `--report` (default WORK/peer_torchfuzz.json) gets one JSON with every figure and, per torchfuzz failure, its
seed, signature, message and generated program's path (its source inline when under 20 KB).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import REPO, machine  # (benchmarks/common.py puts the repository on sys.path)

PROGRAM_INLINE_BYTES = 20_000
GRACE_S = 30.0  # after SIGINT, torchfuzz's summary; after that its session is killed
EQSAT_GRACE_S = 1200.0  # eqsat-test lets running programs finish (job timeout 900 s): killed only past this


@dataclass(frozen=True)
class TorchfuzzFailure:
    """One failing torchfuzz seed, as its multi-process fuzzer printed it."""
    seed: int
    signature: str  # what clusters it: exception type and first line (masked), or "mismatch" and the op set
    category: str  # compile-crash | mismatch | eager-fails | generator-error | timeout | unknown
    message: str  # the exception line (or mismatch line) as printed
    ops: tuple[str, ...]  # the program's ops (torchfuzz's OPERATION_STATS), args and constants left out
    program: str  # the generated program's path ("" when none was written)


@dataclass(frozen=True)
class Cause:
    """One distinct signature (a root cause, as far as its signature tells) and what it is."""
    tool: str
    signature: str
    category: str
    false: bool  # not a compiled-vs-eager bug
    count: int
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class ToolRun:
    """One tool's run: what it did and what it found."""
    tool: str
    command: tuple[str, ...]
    cores: int
    cpus: str  # the taskset CPU list, or "" when unpinned
    wall_s: float
    cpu_s: float
    exit_code: int
    programs: int
    candidates: int
    causes: tuple[Cause, ...]
    extra: dict  # tool-specific figures (eqsat-test: its --json figures; torchfuzz: its summary counts)

    @property
    def per_cpu_hour(self) -> float:
        return self.programs / (self.cpu_s / 3600) if self.cpu_s > 0 else 0.0

    @property
    def per_core_hour(self) -> float:
        return self.programs / (self.cores * self.wall_s / 3600) if self.wall_s > 0 else 0.0

    @property
    def false_causes(self) -> int:
        return sum(1 for c in self.causes if c.false)


# ---------------------------------------------------------------- torchfuzz's output

_EXC_LINE = re.compile(r"^((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Unsupported|Failure"
                       r"|Warning|Exc))(?::\s?(.*))?$")
_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"/tmp/\S+"), "<path>"),
    (re.compile(r"\b(?:var_node|node|arg|_index_var_node|_input_size_var_node|buf|tmp|s|u|zuf)_?\d+\b"), "<v>"),
    (re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"), "N"),
]


def mask(text: str) -> str:
    """A message with what varies from program to program masked: addresses, paths, temporaries' names, numbers."""
    for pat, rep in _MASKS:
        text = pat.sub(rep, text)
    return " ".join(text.split())[:200]


def exception_line(text: str) -> str:
    """The last exception line of a traceback-bearing text ("Type: message"), or ""."""
    found = ""
    for line in text.splitlines():
        s = line.strip()
        if _EXC_LINE.match(s) and not s.startswith(("File ", "raise ")):
            found = s
    return found


def failure_signature(block: str) -> tuple[str, str, str]:
    """(signature, category, message) of one failing seed's printed output (the block after "❌ FAILURE - Seed N").

    Categories: "timeout" (torchfuzz's 300 s per seed), "generator-error" (fuzzer.py failed before a program ran),
    "eager-fails" (the program raised before its eager run printed success: the generated program is invalid),
    "mismatch" (the numerics check's "Forward output sums differ"), "compile-crash" (eager succeeded, compiled
    raised), "unknown"."""
    if "Process timed out after" in block:
        return "timeout", "timeout", "Process timed out"
    ops = ",".join(operation_stats(block))
    if "Forward output sums differ" in block:
        return f"mismatch [{ops}]", "mismatch", "Forward output sums differ significantly"
    program_out = block.split("=== Program Output (Failure) ===", 1)
    if len(program_out) == 1:  # fuzzer.py itself failed (spec, graph or code generation)
        line = exception_line(block) or next((ln.strip() for ln in block.splitlines()
                                              if ln.strip().startswith("Error:")), "")
        return f"generator: {mask(line) or 'no message'}", "generator-error", line
    out = program_out[1].split("=== Program Source ===", 1)[0]
    line = exception_line(out)
    if not line:
        return "unknown", "unknown", ""
    exc, _, msg = line.partition(":")
    sig = f"{exc.strip()}: {mask(msg)}" if msg.strip() else exc.strip()
    eager_ok = "eager success" in out or "Eager Success" in out
    return sig, ("compile-crash" if eager_ok else "eager-fails"), line


def operation_stats(block: str) -> list[str]:
    """The ops of torchfuzz's OPERATION_STATS section in a seed's output, sorted; args and constants left out."""
    ops: list[str] = []
    inside = False
    for line in block.splitlines():
        s = line.strip()
        if s == "OPERATION_STATS:":
            inside = True
            continue
        if inside:
            m = re.match(r"^([\w.]+): (\d+)$", s)
            if not m:
                break
            if m.group(1) not in ("arg", "constant") and not m.group(1).startswith("arg_"):
                ops.append(m.group(1))
    return sorted(set(ops))


def parse_torchfuzz_log(text: str) -> tuple[list[TorchfuzzFailure], dict]:
    """torchfuzz's multi-process output (stdout and stderr together; tqdm's carriage returns allowed) → its failing
    seeds and its summary counts ({"results", "successful", "failed", "ignored"}; -1 where not printed)."""
    lines = [p.rstrip() for p in re.split(r"[\r\n]", text)]
    lines = [ln for ln in lines if ln.strip() and not ln.startswith("Processing seeds")]
    failures: list[TorchfuzzFailure] = []
    i = 0
    while i < len(lines):
        m = re.search(r"❌ FAILURE - Seed (\d+)", lines[i])
        if not m:
            i += 1
            continue
        body = []
        i += 1
        while i < len(lines) and lines[i].startswith("   "):
            body.append(lines[i][3:])
            i += 1
        block = "\n".join(body)
        sig, cat, msg = failure_signature(block)
        prog = re.search(r"Running: (\S+\.py)", block)
        failures.append(TorchfuzzFailure(int(m.group(1)), sig, cat, msg, tuple(operation_stats(block)),
                                         prog.group(1) if prog else ""))
    counts = {"results": -1, "successful": -1, "failed": -1, "ignored": 0}
    seen = {k: len({m.group(1) for ln in lines if (m := re.search(rf"{k} - Seed (\d+)", ln))})
            for k in ("✅ SUCCESS", "❌ FAILURE", "🚫 IGNORED")}  # --verbose lines: the count without a summary
    if any(seen.values()):
        counts.update(successful=seen["✅ SUCCESS"], failed=seen["❌ FAILURE"], ignored=seen["🚫 IGNORED"],
                      results=sum(seen.values()))
    for ln in lines:  # its summary, when it printed one, has the last word
        if m := re.search(r"Successful: (\d+)/(\d+)", ln):
            counts["successful"], counts["results"] = int(m.group(1)), int(m.group(2))
        elif m := re.search(r"Failed:\s+(\d+)/", ln):
            counts["failed"] = int(m.group(1))
        elif m := re.search(r"Ignored seeds: \[(.*)\]", ln):
            counts["ignored"] = len([s for s in m.group(1).split(",") if s.strip()])
    return failures, counts


def cluster_failures(failures: list[TorchfuzzFailure]) -> tuple[Cause, ...]:
    """One Cause per signature, most seen first; false when the program fails eagerly or torchfuzz itself fails."""
    by: dict[str, list[TorchfuzzFailure]] = {}
    for f in failures:
        by.setdefault(f.signature, []).append(f)
    causes = [Cause("torchfuzz", sig, fs[0].category, fs[0].category in ("eager-fails", "generator-error"), len(fs),
                    tuple(sorted(f.seed for f in fs))) for sig, fs in by.items()]
    return tuple(sorted(causes, key=lambda c: (-c.count, c.signature)))


# ---------------------------------------------------------------- eqsat-test's summary

NOT_COMPILED_VS_EAGER = {"eager-bug"}  # a cluster of this kind blames eager, not the compiler


def eqsat_causes(summary: dict) -> tuple[Cause, ...]:
    """eqsat-test's clusters as Causes (its `kind`; false when the kind blames eager)."""
    out = []
    for c in summary.get("clusters") or []:
        sig = f"[{c.get('kind')}] {' '.join(c.get('pattern') or []) or '(no ops)'}: {c.get('symptom')}; " \
              f"{c.get('backend')}/{c.get('device')}; {c.get('known')}"
        out.append(Cause("eqsat-test", sig, str(c.get("kind")), c.get("kind") in NOT_COMPILED_VS_EAGER,
                         int(c.get("count") or 0), ()))
    return tuple(out)


def eqsat_extra(summary: dict) -> dict:
    clusters = summary.get("clusters") or []
    only_variant = sum(1 for c in clusters if not c.get("seed_fails"))
    return {"root_causes": summary.get("root_causes"), "ledger_matches": summary.get("ledger_matches"),
            "new_root_causes": summary.get("new_root_causes"),
            "exposed_only_by_rewrites": only_variant,
            "exposed_only_by_rewrites_share": round(only_variant / len(clusters), 3) if clusters else None,
            "variants": summary.get("variants"), "executed": summary.get("executed"),
            "discarded": summary.get("discarded"), "internal_errors": summary.get("internal_errors"),
            "internal_error_kinds": summary.get("internal_error_kinds"), "this_run": summary.get("this_run")}


# ---------------------------------------------------------------- running

def cpu_split(cores: int, parallel: bool) -> tuple[str, str, str]:
    """(torchfuzz's CPU list, eqsat-test's, a note): half each when side by side on a machine with 2N cores."""
    have = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    if not shutil.which("taskset"):
        return "", "", "taskset not found: unpinned"
    if parallel:
        if len(have) < 2 * cores:
            return "", "", f"only {len(have)} cores for 2 x {cores}: side by side unpinned"
        return (",".join(map(str, have[:cores])), ",".join(map(str, have[cores:2 * cores])),
                f"pinned: torchfuzz on {have[:cores]}, eqsat-test on {have[cores:2 * cores]}")
    if len(have) < cores:
        return "", "", f"only {len(have)} cores for {cores}: unpinned"
    cpus = ",".join(map(str, have[:cores]))
    return cpus, cpus, f"pinned to {have[:cores]}, one after the other"


@dataclass
class Child:
    """A started tool: its process (in its own session), its deadline and how it is stopped."""
    name: str
    proc: subprocess.Popen
    started: float
    stop_at: float  # SIGINT to the group (torchfuzz) at this time; inf: none
    kill_at: float  # SIGKILL to the group past this
    stopped: bool = False
    wall: float = 0.0
    cpu: float = 0.0
    code: int | None = None
    polled: float = 0.0  # the largest session_cpu seen


def start(name: str, cmd: list[str], cpus: str, cwd: Path, env: dict, stdout, stderr, stop_after: float,
          kill_after: float) -> Child:
    full = (["taskset", "-c", cpus] if cpus else []) + cmd
    print(f"{name}: {' '.join(full)}", flush=True)
    proc = subprocess.Popen(full, cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True)
    t = time.monotonic()
    return Child(name, proc, t, t + stop_after, t + kill_after)


def session_cpu(sid: int) -> float:
    """CPU seconds of a session's live processes and of the descendants they reaped (utime, stime, cutime, cstime
    from /proc): the processes are disjoint, and so are the dead ones each reaped. 0 where /proc is absent."""
    total = 0
    for d in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # fields after the name: state, ppid, pgrp, session, ...
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def wait_all(children: list[Child]) -> None:
    """Wait for every child, stopping each at its time. CPU seconds: the larger of wait4's (the child and its
    waited-for descendants) and the last sum over its session (session_cpu), which keeps the CPU of a process tree
    killed before its parent reaped it."""
    left = list(children)
    while left:
        for c in list(left):
            c.polled = max(c.polled, session_cpu(c.proc.pid))
            pid, status, ru = os.wait4(c.proc.pid, os.WNOHANG)
            if pid:
                c.wall = time.monotonic() - c.started
                c.cpu = max(ru.ru_utime + ru.ru_stime, c.polled)
                c.code = os.waitstatus_to_exitcode(status)
                c.proc.returncode = c.code
                _kill_group(c.proc.pid, signal.SIGKILL)  # orphans of an interrupted run
                left.remove(c)
                continue
            now = time.monotonic()
            if now >= c.stop_at and not c.stopped:
                # SIGINT to the main process alone (its pool terminates the workers); that termination may hang,
                # hence the kill past kill_at, and the verdicts counted from the verbose lines, not its summary
                print(f"{c.name}: {now - c.started:.0f} s: stopping it (SIGINT)", flush=True)
                try:
                    os.kill(c.proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
                c.stopped = True
            elif now >= c.kill_at:
                print(f"{c.name}: {now - c.started:.0f} s: killing it", flush=True)
                _kill_group(c.proc.pid, signal.SIGKILL)
        time.sleep(1.0)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def torchfuzz_run(child: Child, cmd: list[str], cpus: str, cores: int, log: Path) -> ToolRun:
    failures, counts = parse_torchfuzz_log(log.read_text(errors="replace"))
    causes = cluster_failures(failures)
    programs = counts["results"] if counts["results"] >= 0 else 0
    extra = {"summary": counts, "log": str(log), "failures": [_failure_record(f) for f in failures]}
    return ToolRun("torchfuzz", tuple(cmd), cores, cpus, child.wall, child.cpu, child.code or 0, programs,
                   len(failures), causes, extra)


def _failure_record(f: TorchfuzzFailure) -> dict:
    rec = dataclasses.asdict(f)
    p = Path(f.program) if f.program else None
    if p and p.is_file() and p.stat().st_size <= PROGRAM_INLINE_BYTES:
        rec["source"] = p.read_text(errors="replace")
    return rec


def eqsat_run(child: Child, cmd: list[str], cpus: str, cores: int, stdout: Path) -> ToolRun:
    try:
        summary = json.loads(stdout.read_text() or "{}")
    except json.JSONDecodeError:
        summary = {}
    judged = int((summary.get("this_run") or {}).get("judged") or 0)
    return ToolRun("eqsat-test", tuple(cmd), cores, cpus, child.wall, child.cpu, child.code or 0, judged,
                   int(summary.get("candidates") or 0), eqsat_causes(summary), eqsat_extra(summary))


def table(runs: list[ToolRun]) -> str:
    head = (f"{'tool':<11} {'programs':>8} {'CPU s':>7} {'wall s':>7} {'/CPU-hour':>10} {'/core-hour':>10} "
            f"{'candidates':>10} {'root causes':>11} {'false':>5}")
    rows = [head, "-" * len(head)]
    for r in runs:
        rows.append(f"{r.tool:<11} {r.programs:>8} {r.cpu_s:>7.0f} {r.wall_s:>7.0f} {r.per_cpu_hour:>10.0f} "
                    f"{r.per_core_hour:>10.0f} {r.candidates:>10} {len(r.causes):>11} {r.false_causes:>5}")
    return "\n".join(rows)


def details(runs: list[ToolRun]) -> str:
    out = []
    for r in runs:
        if r.tool == "eqsat-test":
            e = r.extra
            share = e.get("exposed_only_by_rewrites_share")
            out.append(f"eqsat-test: root_causes {e.get('root_causes')}, ledger_matches {e.get('ledger_matches')}, "
                       f"exposed only by a rewritten variant {e.get('exposed_only_by_rewrites')}"
                       f"{f' ({share:.0%})' if share is not None else ''}, internal errors {e.get('internal_errors')}")
        for c in r.causes:
            what = f"FALSE:{c.category}" if c.false else c.category
            out.append(f"  {r.tool}: {c.count:>3} x {what:<21} {c.signature[:150]}"
                       + (f"  seeds {list(c.seeds[:5])}" if c.seeds else ""))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torchfuzz", type=Path, required=True, help="the folder holding torchfuzz's fuzzer.py")
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--cores", type=int, required=True, help="cores (processes) for each tool")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--mode", choices=["sequential", "parallel"], default="sequential")
    ap.add_argument("--only", choices=["torchfuzz", "eqsat-test"], default=None, help="run one tool alone")
    ap.add_argument("--job-timeout", type=float, default=None,
                    help="eqsat-test fuzz's seconds per program (default its own); it stops this long after M minutes")
    ap.add_argument("--start", type=int, default=0, help="torchfuzz's first seed (eqsat-test's --seed is this too)")
    ap.add_argument("--out", type=Path, default=None, help="work folder (eqsat-test's hunt, torchfuzz's log)")
    ap.add_argument("--report", type=Path, default=None, help="the JSON report (default OUT/peer_torchfuzz.json)")
    a = ap.parse_args()
    tf_dir = a.torchfuzz.resolve()
    if not (tf_dir / "fuzzer.py").is_file():
        ap.error(f"{tf_dir}/fuzzer.py not found")
    out = (a.out or Path(tempfile.mkdtemp(prefix="peer-torchfuzz-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    hunt = out / "eqsat"
    if hunt.exists() and any(hunt.iterdir()):
        ap.error(f"{hunt} is not empty: its store would add an earlier hunt's findings")
    report = a.report or out / "peer_torchfuzz.json"
    parallel = a.mode == "parallel"
    cpus_tf, cpus_eq, pin_note = cpu_split(a.cores, parallel)
    import torch
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}; {pin_note}")

    budget = a.minutes * 60
    seeds = max(100, int(budget * a.cores))  # at least a second a seed: never run out before the minutes end
    tf_cmd = [sys.executable, "fuzzer.py", "--start", str(a.start), "--count", str(seeds), "-p", str(a.cores), "-v"]
    tf_env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONUNBUFFERED": "1"}
    if a.device == "cpu":
        tf_env["TORCHFUZZ_DEVICE"] = "cpu"  # the copy's CPU switch (upstream's default template sets 'cuda')
        tf_env["CUDA_VISIBLE_DEVICES"] = ""
    eq_cmd = [sys.executable, "-m", "eqsat_test.runners.cli", "fuzz", "--minutes", f"{a.minutes:g}", "-j",
              str(a.cores), "--device", a.device, "--json", "--out", str(hunt), "--seed", str(a.start)]
    if a.job_timeout is not None:
        eq_cmd += ["--job-timeout", f"{a.job_timeout:g}"]
    eq_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO)] + [q for q in os.environ.get("PYTHONPATH", "").split(os.pathsep) if q])}
    tf_log, eq_stdout, eq_stderr = out / "torchfuzz.log", out / "eqsat.json", out / "eqsat.log"

    tools = [t for t in ("torchfuzz", "eqsat-test") if a.only in (None, t)]
    runs: list[ToolRun] = []
    with contextlib.ExitStack() as files:
        def launch(tool: str) -> Child:
            if tool == "torchfuzz":
                tfl = files.enter_context(open(tf_log, "w"))
                return start(tool, tf_cmd, cpus_tf, tf_dir, tf_env, tfl, subprocess.STDOUT, budget,
                             budget + GRACE_S)
            eqo, eqe = files.enter_context(open(eq_stdout, "w")), files.enter_context(open(eq_stderr, "w"))
            return start(tool, eq_cmd, cpus_eq, REPO, eq_env, eqo, eqe, float("inf"), budget + (a.job_timeout + 60.0 if a.job_timeout is not None else EQSAT_GRACE_S))
        if parallel:
            children = [launch(t) for t in tools]
            wait_all(children)
        else:
            children = []
            for t in tools:
                children.append(launch(t))
                wait_all(children[-1:])
    for c in children:
        runs.append(torchfuzz_run(c, tf_cmd, cpus_tf, a.cores, tf_log) if c.name == "torchfuzz"
                    else eqsat_run(c, eq_cmd, cpus_eq, a.cores, eq_stdout))
    print("\n" + table(runs))
    print(details(runs))
    doc = {"machine": machine(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
           "minutes": a.minutes, "cores": a.cores, "device": a.device, "mode": a.mode, "pinning": pin_note,
           "work": str(out),
           "runs": [{**dataclasses.asdict(r), "per_cpu_hour": round(r.per_cpu_hour, 1),
                     "per_core_hour": round(r.per_core_hour, 1), "false_causes": r.false_causes} for r in runs]}
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(doc, indent=1, default=str))
    print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
