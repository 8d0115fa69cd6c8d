"""A hunt's generated programs: drawn by the generator in a child process of their own (a program that crashes it costs one seed), and kept in the campaign store's `programs` table with their seed, source and check verdict, so any finding replays exactly and a hunt resumes where it stopped."""
from __future__ import annotations

import hashlib
import json
import os
import random
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from eqsat_test.runners import REPO_ROOT

PROGRAMS_DIR = "programs"
SEED_STRIDE = 1_000_000  # program i of hunt seed S is generator seed S * SEED_STRIDE + i
GENERATE_TIMEOUT = 120.0  # seconds the generator may take for one program (its check's eager run included)
WINDOW_SHARE = 0.5  # with --windows-from: the share of programs that are windows of real graphs (hunt/windows.py)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS programs (
    seed INTEGER PRIMARY KEY,       -- the generator's seed: with the version, all it takes to make the program again
    hunt_seed INTEGER NOT NULL,     -- the hunt's --seed
    idx INTEGER NOT NULL,           -- its place in the hunt: seed = hunt_seed * SEED_STRIDE + idx
    version TEXT,                   -- the generator's version (eqsat_test.hunt.GENERATOR_VERSION, or windows-N for a window)
    status TEXT NOT NULL,           -- ok | discarded
    stage TEXT,                     -- ok, or where it was discarded: load, fake, eager, slow, degenerate, generate, crash,
                                    -- capture, cut (a window: its source does not capture, no window fits)
    reason TEXT,
    path TEXT,                      -- the model file (ok programs)
    sha TEXT,                       -- sha256 of the file: the job's model_sha
    source TEXT,                    -- the file itself
    record TEXT,                    -- JSON: ops, classes, dtypes, shapes, dynamic, writes (hunt.program.Program.record)
    made REAL, seconds REAL
);
CREATE INDEX IF NOT EXISTS programs_hunt ON programs(hunt_seed, idx);
"""


@dataclass(frozen=True)
class Made:
    """One seed's outcome: a program written to `path`, or discarded at `stage` (why: `reason`)."""

    seed: int
    ok: bool
    stage: str
    reason: str = ""
    path: str | None = None
    record: dict | None = None
    seconds: float = 0.0


def is_window(seed: int, share: float) -> bool:
    """Whether the program of `seed` is a window of a real graph (else a generated program), `share` of them."""
    return share >= 1 or (share > 0 and random.Random(f"eqsat-hunt-source-{seed}").random() < share)


class ProgramTable:
    """The store's `programs` table (in the campaign's SQLite file, beside jobs and clusters)."""

    def __init__(self, store) -> None:
        self.store = store
        with store.tx():
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    store.db.execute(stmt)

    def add(self, hunt_seed: int, idx: int, made: Made, version: str) -> None:
        source = Path(made.path).read_text() if made.ok and made.path else None
        sha = hashlib.sha256(source.encode()).hexdigest() if source is not None else None
        with self.store.tx():
            self.store.db.execute(
                "INSERT OR REPLACE INTO programs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (made.seed, hunt_seed, idx, version, "ok" if made.ok else "discarded", made.stage, made.reason,
                 made.path, sha, source, json.dumps(made.record) if made.record else None, time.time(), made.seconds))

    def next_index(self, hunt_seed: int) -> int:
        r = self.store.db.execute("SELECT MAX(idx) AS m FROM programs WHERE hunt_seed=?", (hunt_seed,)).fetchone()
        return 0 if r["m"] is None else int(r["m"]) + 1

    def ok_programs(self) -> list[dict]:
        rows = self.store.db.execute("SELECT seed, path, sha, source, record FROM programs WHERE status='ok' "
                                     "ORDER BY made, seed")
        return [{**dict(r), "record": json.loads(r["record"] or "{}")} for r in rows]

    def restore_file(self, row: dict) -> Path:
        """The program's file, written again from the store where it is missing (a moved or cleaned folder)."""
        p = Path(row["path"])
        if not p.is_file() and row.get("source"):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(row["source"])
        return p

    def counts(self) -> dict:
        """ok and discarded programs, the discarded by stage, generation seconds."""
        n = {"ok": 0, "discarded": 0}
        by_stage: dict[str, int] = {}
        seconds = 0.0
        for r in self.store.db.execute("SELECT status, stage, COUNT(*) AS n, SUM(seconds) AS s FROM programs "
                                       "GROUP BY status, stage"):
            n[r["status"]] += r["n"]
            seconds += r["s"] or 0.0
            if r["status"] != "ok":
                by_stage[r["stage"]] = r["n"]
        return {**n, "by_stage": by_stage, "seconds": round(seconds, 2)}

    def by_path(self) -> dict[str, dict]:
        rows = self.store.db.execute("SELECT seed, path, record FROM programs WHERE status='ok'")
        return {str(r["path"]): {"seed": r["seed"], "record": json.loads(r["record"] or "{}")} for r in rows}


class Generator:
    """`python -m eqsat_test.hunt --serve DIR` as a child: a seed in, a JSON line out (a window of the model files
    `windows_from` for `window=True`). A child that dies or hangs on a seed is started again; that seed is
    discarded (stage crash or generate)."""

    def __init__(self, folder: Path, inplace: bool = True, timeout: float = GENERATE_TIMEOUT,
                 env: dict | None = None, windows_from: tuple[str, ...] = ()) -> None:
        self.folder, self.inplace, self.timeout = folder, inplace, timeout
        self.windows_from = windows_from
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.log = folder.parent / "generator.log"

    def _start(self) -> subprocess.Popen:
        self.folder.mkdir(parents=True, exist_ok=True)
        env = dict(self.env or os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env.setdefault("OMP_NUM_THREADS", "1")
        cmd = [sys.executable, "-m", "eqsat_test.hunt", "--serve", str(self.folder)] + \
            ([] if self.inplace else ["--no-inplace"]) + \
            (["--windows-from", *self.windows_from] if self.windows_from else [])
        err = open(self.log, "ab")
        try:
            return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
                                    text=True, bufsize=1)
        finally:
            err.close()

    def make(self, seed: int, window: bool = False) -> Made:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.monotonic()
        try:
            self.proc.stdin.write(f"{'window ' if window else ''}{seed}\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
            line = self.proc.stdout.readline() if ready else ""
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            rc = self.proc.poll()
            self.close()
            stage, why = (("generate", f"no program within {self.timeout:g} s") if rc is None else
                          ("crash", f"the generator died (exit {rc}) on this seed"))
            return Made(seed, False, stage, why, seconds=time.monotonic() - t0)
        d = json.loads(line)
        return Made(seed=d["seed"], ok=bool(d["ok"]), stage=d["stage"], reason=d.get("reason") or "",
                    path=d.get("path"), record=d.get("record"), seconds=float(d.get("seconds") or 0.0))

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            for fh in (self.proc.stdin, self.proc.stdout):
                try:
                    if fh is not None:
                        fh.close()
                except OSError:
                    pass
            self.proc = None
