"""A campaign's progress: a line per finished job (or a bar on a terminal), and a heartbeat while none finishes: jobs running, their stage, elapsed."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from eqsat_test.runners.campaign.jobs import HEARTBEAT_S


@dataclass
class RunStats:
    """What a campaign's run did: jobs (programs, in a hunt) run, skipped and left, and why it stopped."""
    ran: int = 0
    skipped: int = 0
    left: int = 0
    budget_spent: bool = False
    interrupted: bool = False
    peak_at_once: int = 0  # most jobs (processes) that ran at the same time


class Progress:
    """A tqdm bar on a terminal; plain lines on stderr otherwise (or with --json)."""

    def __init__(self, total: int, counts: dict, plain: bool) -> None:
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self.last = self.t0  # when a line was printed last (heartbeat)
        self.bar = None
        if not plain and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="job", file=sys.stderr, dynamic_ncols=True)
                self.bar.set_postfix_str(self._postfix(counts))
            except ImportError:
                self.bar = None

    @staticmethod
    def _postfix(counts: dict) -> str:
        # root causes (clusters) first: signatures count one bug once per rule list until minimized
        return (f"root causes={counts.get('root_causes', 0)} (candidates {counts['compiler_bugs']}) "
                f"notes={counts['findings'] - counts['compiler_bugs']}")

    def heartbeat(self, running: list[tuple[dict, float | None, Path | None]]) -> None:
        """A line at least every HEARTBEAT_S seconds while no job ends: the jobs running (job, its start as
        time.time(), its run folder), each with its stage (the last line its run printed) and time so far."""
        now = time.monotonic()
        if now - self.last < HEARTBEAT_S:
            return
        self.last = now
        parts = [f"{Path(j['model_rel']).name} {job_stage(d) if d else 'on Ray'}"
                 + (f" ({time.time() - started:.0f} s)" if started else "") for j, started, d in running]
        line = (f"eqsat-test: {self.done}/{self.total} jobs done, {len(running)} running"
                + (": " + "; ".join(parts) if parts else "") + f" | {_fmt_s(now - self.t0)} elapsed")
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            click.echo(line, err=True)

    def update(self, job: dict, outcome: dict, counts: dict) -> None:
        self.done += 1
        self.last = time.monotonic()
        if self.bar is not None:
            self.bar.set_postfix_str(self._postfix(counts))
            self.bar.update(1)
            return
        el = time.monotonic() - self.t0
        rate = self.done / el * 60 if el > 0 else 0.0
        left = (self.total - self.done) / (self.done / el) if self.done and el > 0 else 0.0
        n = len((outcome.get("report") or {}).get("findings") or [])
        click.echo(f"eqsat-test: [{self.done}/{self.total}] {outcome['status']:<9} {job['model_rel']} "
                   f"rules={job['rule_label']} {job['backend']}/{job['device']} seed={job['seed']} "
                   f"{outcome['finished'] - outcome['started']:.1f} s, {n} finding(s) | distinct so far: "
                   f"{self._postfix(counts)}, {rate:.1f} jobs/min, ~{_fmt_s(left)} left", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def job_stage(run_dir: Path, width: int = 70) -> str:
    """What a job's run is doing: the last line it printed (its progress and stage lines), shortened."""
    try:
        with open(Path(run_dir) / "job.log", "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            tail = fh.read().decode(errors="replace")
    except OSError:
        return "starting"
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip().startswith("eqsat-test: ")]
    if not lines:
        return "starting"
    text = lines[-1][len("eqsat-test: "):]
    return text if len(text) <= width else text[:width - 3] + "..."


def _fmt_s(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
