"""The campaign store: one SQLite file (WAL) of jobs, root causes (clusters) and note groups merged over jobs, findings deduplicated by signature, and sightings.

Every job's outcome goes in with ONE transaction (the job row, its sightings and the finding
counts together), and a job already recorded is never recorded again: a campaign killed with
`kill -9` at any moment and resumed loses nothing and counts nothing twice. Stdlib only.
"""
from __future__ import annotations

import json
import socket
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

# Imports inside functions: campaign commands start without torch (findings.write and the
# records it pulls in import it); the store and report load them only when they need them.

STORE_NAME = "campaign.sqlite"
SCHEMA_VERSION = 1
# A job in one of these states is finished: resume skips it (`retry_failed` re-opens the failures).
FINISHED = ("done", "error", "timeout", "crash", "bad-input")
FAILED = ("error", "timeout", "crash")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS jobs (
    key TEXT PRIMARY KEY,           -- sha256 of model content, rule-set version, backend, device, torch, seed, options
    model TEXT NOT NULL,            -- path of the model file (as resolved from the spec)
    model_sha TEXT,
    rule_set TEXT,                  -- JSON list of rule specs as written in the spec
    rule_set_version TEXT,          -- hash of the rule files' contents
    backend TEXT, device TEXT, seed INTEGER, torch_version TEXT,
    options TEXT,                   -- JSON: variants, inputs, extra run arguments
    status TEXT NOT NULL,           -- running | interrupted | retry | done | error | timeout | crash | bad-input
    exit_code INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    started REAL, finished REAL, seconds REAL,
    variants INTEGER, executed INTEGER, compiler_bugs INTEGER, notes INTEGER,
    run_dir TEXT, host TEXT, error TEXT,
    result TEXT                     -- JSON: the run's report (findings, stats) and rule facts
);
CREATE TABLE IF NOT EXISTS findings (
    signature TEXT PRIMARY KEY,     -- runners.findings.signature(): one underlying bug
    kind TEXT NOT NULL, compiler_bug INTEGER NOT NULL,
    backend TEXT, device TEXT, rules TEXT, ops TEXT, detail TEXT,
    count INTEGER NOT NULL,         -- sightings, summed over jobs (a run's own count included)
    jobs INTEGER NOT NULL,          -- jobs it was seen in
    first_seen REAL, last_seen REAL, first_job TEXT,
    example TEXT                    -- JSON of the first sighting's finding
);
CREATE TABLE IF NOT EXISTS sightings (
    signature TEXT NOT NULL, job_key TEXT NOT NULL,
    model TEXT, run_dir TEXT, repro TEXT, count INTEGER NOT NULL, seen REAL, finding TEXT,
    PRIMARY KEY (signature, job_key)
);
CREATE INDEX IF NOT EXISTS sightings_job ON sightings(job_key);
CREATE TABLE IF NOT EXISTS clusters (     -- runners.findings.clusters: one root cause, merged over jobs
    key TEXT PRIMARY KEY,
    kind TEXT, backend TEXT, device TEXT, symptom TEXT, input_class TEXT,
    pattern TEXT,                   -- JSON list of canonical op names
    ledger TEXT,                    -- JSON list of the ledger entries it matches
    seed_fails INTEGER NOT NULL,    -- the unmodified seed fails with it in some job
    count INTEGER NOT NULL,         -- sightings, summed over jobs
    jobs INTEGER NOT NULL,
    first_seen REAL, last_seen REAL,
    cluster TEXT                    -- JSON of the merged Cluster
);
CREATE TABLE IF NOT EXISTS cluster_sightings (
    key TEXT NOT NULL, job_key TEXT NOT NULL,
    model TEXT, run_dir TEXT, repro TEXT, count INTEGER NOT NULL, seen REAL, cluster TEXT,
    PRIMARY KEY (key, job_key)
);
CREATE TABLE IF NOT EXISTS note_groups (  -- runners.findings.notes: one per (model, kind, cause), merged over jobs
    key TEXT PRIMARY KEY, kind TEXT, model TEXT, cause TEXT, loud INTEGER NOT NULL,
    count INTEGER NOT NULL, jobs INTEGER NOT NULL,
    grp TEXT                        -- JSON of the merged NoteGroup
);
CREATE TABLE IF NOT EXISTS planned (   -- the jobs the latest campaign run set out to do (its spec's jobs)
    key TEXT PRIMARY KEY, model TEXT NOT NULL, rules TEXT, backend TEXT, device TEXT, seed INTEGER
);
"""


def is_compiler_bug(kind: str) -> bool:
    """A bug kind (the compiler's, or eager's: eager-bug): the store's `compiler_bug` column counts every PyTorch bug."""
    from eqsat_test.runners.records import BUG_KINDS
    return kind in BUG_KINDS


class Store:
    """One campaign's SQLite store. Use from one thread (the campaign's main loop)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per job.
        self.db = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")  # one fsync per job: negligible beside a job
        self.db.execute("PRAGMA foreign_keys=ON")
        with self.tx():
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    self.db.execute(stmt)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (str(time.time()),))
            self._backfill_clusters()

    def _backfill_clusters(self) -> None:
        """A store made before there were clusters: its done jobs' root causes and note groups, once."""
        if self.db.execute("SELECT 1 FROM meta WHERE key='clusters_from_jobs'").fetchone():
            return
        if not self.db.execute("SELECT 1 FROM clusters LIMIT 1").fetchone():
            for r in self.db.execute("SELECT key, model, run_dir, finished, result FROM jobs WHERE status='done'").fetchall():
                try:
                    report = (json.loads(r["result"] or "{}") or {}).get("report") or {}
                except json.JSONDecodeError:
                    continue
                self._record_clusters({"key": r["key"], "model": r["model"]}, {"run_dir": r["run_dir"]}, report,
                                      r["finished"] or 0.0)
        self.db.execute("INSERT INTO meta VALUES ('clusters_from_jobs', '1')")

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @contextmanager
    def tx(self):
        """BEGIN IMMEDIATE ... COMMIT; ROLLBACK on any exception."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # ---- meta ---------------------------------------------------------------------------------
    def set_meta(self, **kv) -> None:
        with self.tx():
            for k, v in kv.items():
                self.db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                                (k, json.dumps(v)))

    def meta(self) -> dict:
        out = {}
        for r in self.db.execute("SELECT key, value FROM meta"):
            try:
                out[r["key"]] = json.loads(r["value"])
            except json.JSONDecodeError:
                out[r["key"]] = r["value"]
        return out

    # ---- jobs ---------------------------------------------------------------------------------
    def status_of(self, keys) -> dict[str, str]:
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, status FROM jobs WHERE key IN ({','.join('?' * len(chunk))})"
            out.update({r["key"]: r["status"] for r in self.db.execute(q, chunk)})
        return out

    def finished_keys(self) -> set[str]:
        q = f"SELECT key FROM jobs WHERE status IN ({','.join('?' * len(FINISHED))})"
        return {r["key"] for r in self.db.execute(q, FINISHED)}

    def mark_running(self, job: dict | list[dict], host: str | None = None) -> None:
        """Note that `job` (or each of a list, in one transaction) started; finished jobs are left alone."""
        now = time.time()
        with self.tx():
            for j in (job if isinstance(job, list) else [job]):
                self._mark_running(j, now, host)

    def _mark_running(self, job: dict, now: float, host: str | None) -> None:
        self.db.execute(
            """INSERT INTO jobs (key, model, model_sha, rule_set, rule_set_version, backend, device, seed,
                                 torch_version, options, status, attempts, started, host)
               VALUES (?,?,?,?,?,?,?,?,?,?, 'running', 1, ?, ?)
               ON CONFLICT(key) DO UPDATE SET status='running', attempts=attempts+1, started=excluded.started,
                                              host=excluded.host
               WHERE jobs.status NOT IN ('done','error','timeout','crash','bad-input')""",
            (*_job_cols(job), now, host or socket.gethostname()))

    def record_job(self, job: dict, outcome: dict) -> bool:
        """Record a finished job and its findings in one transaction. False if it was already recorded
        (nothing is written then). `outcome`: status, exit_code, started, finished, run_dir, host,
        error, report (the run's report dict, or None), rules (facts about the rule set)."""
        report = outcome.get("report") or {}
        findings = list(report.get("findings") or [])
        groups: dict[str, dict] = {}
        from eqsat_test.runners.findings.write import signature
        from eqsat_test.runners.records import Finding  # (the module's note: loaded when needed)
        for f in map(Finding.from_dict, findings):  # an old results.json's too
            sig = f.signature or signature(f)
            g = groups.setdefault(sig, {"finding": f.with_(signature=sig), "count": 0})
            g["count"] += int(f.count or 1)
        result = {"report": report, "rules": outcome.get("rules") or {}}
        finished = outcome.get("finished") or time.time()
        bugs = sum(1 for g in groups.values() if is_compiler_bug(g["finding"].kind))
        with self.tx():
            row = self.db.execute("SELECT status FROM jobs WHERE key=?", (job["key"],)).fetchone()
            if row is not None and row["status"] in FINISHED:
                return False
            self.db.execute(
                """INSERT INTO jobs (key, model, model_sha, rule_set, rule_set_version, backend, device, seed,
                                     torch_version, options, status, attempts, started, host,
                                     exit_code, finished, seconds, variants, executed, compiler_bugs, notes,
                                     run_dir, error, result)
                   VALUES (?,?,?,?,?,?,?,?,?,?, ?, 1, ?, ?, ?,?,?,?,?,?,?,?,?,?)
                   ON CONFLICT(key) DO UPDATE SET status=excluded.status, started=excluded.started,
                       host=excluded.host, exit_code=excluded.exit_code, finished=excluded.finished,
                       seconds=excluded.seconds, variants=excluded.variants, executed=excluded.executed,
                       compiler_bugs=excluded.compiler_bugs, notes=excluded.notes, run_dir=excluded.run_dir,
                       error=excluded.error, result=excluded.result, torch_version=excluded.torch_version""",
                (*_job_cols(job, torch_version=outcome.get("torch_version") or report.get("torch_version")),
                 outcome["status"], outcome.get("started"), outcome.get("host") or socket.gethostname(),
                 outcome.get("exit_code"), finished,
                 round(finished - outcome["started"], 3) if outcome.get("started") else None,
                 report.get("variants"), report.get("executed"), bugs, len(groups) - bugs,
                 outcome.get("run_dir"), outcome.get("error"), json.dumps(result, default=str)))
            for sig, g in groups.items():
                f, n = g["finding"], g["count"]
                self.db.execute(
                    "INSERT INTO sightings VALUES (?,?,?,?,?,?,?,?)",
                    (sig, job["key"], job["model"], outcome.get("run_dir"), f.repro, n, finished,
                     json.dumps(f.to_dict(), default=str)))
                self.db.execute(
                    """INSERT INTO findings (signature, kind, compiler_bug, backend, device, rules, ops, detail,
                                             count, jobs, first_seen, last_seen, first_job, example)
                       VALUES (?,?,?,?,?,?,?,?,?,1,?,?,?,?)
                       ON CONFLICT(signature) DO UPDATE SET count=count+excluded.count, jobs=jobs+1,
                           first_seen=MIN(first_seen, excluded.first_seen),
                           last_seen=MAX(last_seen, excluded.last_seen)""",
                    (sig, f.kind, int(is_compiler_bug(f.kind)), f.backend, f.device,
                     json.dumps(sorted(f.rules or [])), json.dumps(sorted(set(f.min_ops or f.ops or []))),
                     (f.detail or "")[:2000], n, finished, finished, job["key"], json.dumps(f.to_dict(), default=str)))
            self._record_clusters(job, outcome, report, finished)
        return True

    def _record_clusters(self, job: dict, outcome: dict, report: dict, finished: float) -> None:
        """The job's root causes and note groups, merged into the campaign's (inside record_job's transaction)."""
        from eqsat_test.runners.findings.clusters import Cluster, merge_clusters, report_clusters
        from eqsat_test.runners.findings.notes import NoteGroup, merge_note_groups, report_note_groups
        for c in report_clusters(report, model=job["model"]):
            self.db.execute("INSERT INTO cluster_sightings VALUES (?,?,?,?,?,?,?,?)",
                            (c.key, job["key"], job["model"], outcome.get("run_dir"), c.repro, c.count, finished,
                             json.dumps(c.to_dict())))
            row = self.db.execute("SELECT cluster, first_seen FROM clusters WHERE key=?", (c.key,)).fetchone()
            merged = merge_clusters([Cluster.from_dict(json.loads(row["cluster"])), c])[0] if row else c
            self.db.execute(
                """INSERT INTO clusters VALUES (?,?,?,?,?,?,?,?,?,?,1,?,?,?)
                   ON CONFLICT(key) DO UPDATE SET ledger=excluded.ledger, seed_fails=excluded.seed_fails,
                       count=count+excluded.count, jobs=jobs+1, last_seen=excluded.last_seen,
                       cluster=excluded.cluster""",
                (c.key, merged.kind, merged.backend, merged.device, merged.symptom, merged.input_class,
                 json.dumps(list(merged.pattern)), json.dumps(list(merged.ledger)), int(merged.seed_fails), c.count,
                 row["first_seen"] if row else finished, finished, json.dumps(merged.to_dict())))
        for g in report_note_groups(report, model=job["model"]):
            row = self.db.execute("SELECT grp FROM note_groups WHERE key=?", (g.key,)).fetchone()
            merged = merge_note_groups([NoteGroup.from_dict(json.loads(row["grp"])), g])[0] if row else g
            self.db.execute(
                """INSERT INTO note_groups VALUES (?,?,?,?,?,?,1,?)
                   ON CONFLICT(key) DO UPDATE SET loud=excluded.loud, count=count+excluded.count, jobs=jobs+1,
                       grp=excluded.grp""",
                (g.key, g.kind, g.model, g.cause, int(merged.loud), g.count, json.dumps(merged.to_dict())))

    def mark_interrupted(self, keys: list[str] | None = None) -> int:
        """Jobs left running by a campaign that stopped (budget, Ctrl-C, kill -9: then at the next start)
        become `interrupted`: not finished, so the next run runs them. `keys` None: every running job."""
        with self.tx():
            if keys is None:
                return self.db.execute("UPDATE jobs SET status='interrupted' WHERE status='running'").rowcount
            n = 0
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                n += self.db.execute(f"UPDATE jobs SET status='interrupted' WHERE status='running' AND key IN "
                                     f"({','.join('?' * len(chunk))})", chunk).rowcount
            return n

    # ---- the plan -----------------------------------------------------------------------------
    def set_plan(self, jobs: list[dict]) -> None:
        """The jobs this campaign run sets out to do (replacing the previous run's plan)."""
        with self.tx():
            self.db.execute("DELETE FROM planned")
            self.db.executemany(
                "INSERT OR IGNORE INTO planned VALUES (?,?,?,?,?,?)",
                [(j["key"], j["model"], j.get("rule_label") or "+".join(j.get("rule_set") or []) or "default",
                  j.get("backend"), j.get("device"), j.get("seed")) for j in jobs])
            self.db.execute("INSERT INTO meta VALUES ('planned_at', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                            (json.dumps(time.time()),))

    def plan(self) -> list[dict]:
        return [_row(r) for r in self.db.execute("SELECT * FROM planned ORDER BY model, key")]

    def plan_status(self) -> dict:
        """Planned jobs and models, how many finished and how many are left (a model is done when
        all its planned jobs are finished). Zeros where no plan was stored (a store of an older version)."""
        q = f"""SELECT p.key, p.model, j.status IN ({','.join('?' * len(FINISHED))}) AS fin, j.status = 'done' AS ok
                FROM planned p LEFT JOIN jobs j ON j.key = p.key"""
        rows = list(self.db.execute(q, FINISHED))
        models: dict[str, bool] = {}
        for r in rows:
            models[r["model"]] = models.get(r["model"], True) and bool(r["fin"])
        fin = sum(1 for r in rows if r["fin"])
        return {"jobs": len(rows), "finished": fin, "done": sum(1 for r in rows if r["ok"]), "left": len(rows) - fin,
                "models": len(models), "models_done": sum(models.values())}

    def add_run(self, run: dict, keep: int = 100) -> None:
        """Append one campaign run's facts (jobs at once, workers per job, GPU use) to meta `runs`."""
        runs = self.meta().get("runs") or []
        runs = (runs + [run])[-keep:]
        self.set_meta(runs=runs)

    def retry_failed(self) -> int:
        """Re-open jobs that ended in error, timeout or crash (they have no findings recorded)."""
        with self.tx():
            q = f"UPDATE jobs SET status='retry' WHERE status IN ({','.join('?' * len(FAILED))})"
            return self.db.execute(q, FAILED).rowcount

    def jobs(self, status: str | None = None) -> list[dict]:
        q, a = "SELECT * FROM jobs", ()
        if status:
            q, a = q + " WHERE status=?", (status,)
        return [_row(r) for r in self.db.execute(q + " ORDER BY finished IS NULL, finished, key", a)]

    def findings(self) -> list[dict]:
        rows = [_row(r) for r in self.db.execute(
            "SELECT * FROM findings ORDER BY compiler_bug DESC, count DESC, signature")]
        sightings: dict[str, list] = {}
        for r in self.db.execute("SELECT * FROM sightings ORDER BY seen, job_key"):
            sightings.setdefault(r["signature"], []).append(_row(r))
        for r in rows:
            r["sightings"] = sightings.get(r["signature"], [])
        return rows

    def clusters(self) -> list:
        """The campaign's root causes (runners.findings.clusters.Cluster), merged over jobs: new ones first,
        then by sightings; a seed that fails with a cluster in any job marks it (seed_fails)."""
        from eqsat_test.runners.findings.clusters import Cluster, merge_clusters
        return merge_clusters([Cluster.from_dict(json.loads(r["cluster"]))
                               for r in self.db.execute("SELECT cluster FROM clusters ORDER BY key")])

    def cluster_sightings(self) -> dict[str, list[dict]]:
        """cluster key -> its sightings (job, model, run folder, repro, count), oldest first."""
        out: dict[str, list[dict]] = {}
        for r in self.db.execute("SELECT * FROM cluster_sightings ORDER BY seen, job_key"):
            d = _row(r)
            d["cluster"] = json.loads(d["cluster"]) if isinstance(d.get("cluster"), str) else d.get("cluster")
            out.setdefault(r["key"], []).append(d)
        return out

    def note_groups(self) -> list:
        """The campaign's note groups (runners.findings.notes.NoteGroup), one per (model, kind, cause)."""
        from eqsat_test.runners.findings.notes import NoteGroup
        rows = self.db.execute("SELECT grp FROM note_groups ORDER BY loud DESC, count DESC, model, kind, cause")
        return [NoteGroup.from_dict(json.loads(r["grp"])) for r in rows]

    def counts(self) -> dict:
        c = {r["status"]: r["n"] for r in self.db.execute("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status")}
        f = self.db.execute("SELECT COUNT(*) AS n, COALESCE(SUM(compiler_bug),0) AS bugs FROM findings").fetchone()
        rc = self.db.execute("SELECT COUNT(*) AS n FROM clusters").fetchone()
        return {"jobs": c, "findings": f["n"], "compiler_bugs": f["bugs"], "root_causes": rc["n"]}

    def oracle_rule_totals(self) -> dict[str, int]:
        """The oracle's rules over every finished job's verdicts (each run's report, stats.oracle_rules): rule
        id -> elements it convicted, cleared or noted, so that a rule that clears too much shows."""
        total: dict[str, int] = {}
        for r in self.db.execute("SELECT result FROM jobs WHERE result IS NOT NULL"):
            stats = ((json.loads(r["result"]) or {}).get("report") or {}).get("stats") or {}
            for rule, n in (stats.get("oracle_rules") or {}).items():
                total[rule] = total.get(rule, 0) + int(n)
        return dict(sorted(total.items()))

    def check(self) -> list[str]:
        """Invariants that must hold after any crash: every count equals its sightings."""
        problems = []
        for r in self.db.execute(
                """SELECT f.signature, f.count, f.jobs, COALESCE(SUM(s.count),0) AS sc, COUNT(s.job_key) AS sj
                   FROM findings f LEFT JOIN sightings s ON s.signature=f.signature GROUP BY f.signature"""):
            if r["count"] != r["sc"] or r["jobs"] != r["sj"]:
                problems.append(f"finding {r['signature']}: count {r['count']}/{r['sc']}, jobs {r['jobs']}/{r['sj']}")
        for r in self.db.execute(
                """SELECT s.job_key FROM sightings s LEFT JOIN jobs j ON j.key=s.job_key
                   WHERE j.key IS NULL OR j.status != 'done' GROUP BY s.job_key"""):
            problems.append(f"sightings of job {r['job_key']} which is not recorded as done")
        for r in self.db.execute(
                "SELECT s.signature FROM sightings s LEFT JOIN findings f ON f.signature=s.signature WHERE f.signature IS NULL"):
            problems.append(f"sighting of unknown finding {r['signature']}")
        for r in self.db.execute(
                """SELECT c.key, c.count, c.jobs, COALESCE(SUM(s.count),0) AS sc, COUNT(s.job_key) AS sj
                   FROM clusters c LEFT JOIN cluster_sightings s ON s.key=c.key GROUP BY c.key"""):
            if r["count"] != r["sc"] or r["jobs"] != r["sj"]:
                problems.append(f"cluster {r['key']}: count {r['count']}/{r['sc']}, jobs {r['jobs']}/{r['sj']}")
        return problems

    def export_jsonl(self, path: str | Path) -> int:
        """One JSON object per line: the campaign (meta), then every job, every root cause (cluster),
        every note group, then every finding with its sightings. Returns the number of lines written."""
        n = 0
        with open(path, "w") as fh:
            fh.write(json.dumps({"type": "campaign", **self.meta(), "store": str(self.path)}) + "\n")
            n += 1
            for j in self.jobs():
                fh.write(json.dumps({"type": "job", **j}, default=str) + "\n")
                n += 1
            for c in self.clusters():
                fh.write(json.dumps({"type": "cluster", **c.to_dict()}, default=str) + "\n")
                n += 1
            for g in self.note_groups():
                fh.write(json.dumps({"type": "note-group", **g.to_dict()}, default=str) + "\n")
                n += 1
            for f in self.findings():
                fh.write(json.dumps({"type": "finding", **f}, default=str) + "\n")
                n += 1
        return n


def _job_cols(job: dict, torch_version: str | None = None) -> tuple:
    return (job["key"], job["model"], job.get("model_sha"), json.dumps(list(job.get("rule_set") or [])),
            job.get("rule_set_version"), job.get("backend"), job.get("device"), job.get("seed"),
            torch_version or job.get("torch_version"), json.dumps(job.get("options") or {}))


_JSON_COLS = ("rule_set", "options", "result", "rules", "ops", "example", "finding")


def _row(r: sqlite3.Row) -> dict:
    d = dict(r)
    for k in _JSON_COLS:
        if isinstance(d.get(k), str):
            try:
                d[k] = json.loads(d[k])
            except json.JSONDecodeError:
                pass
    return d


def open_store(folder_or_file: str | Path) -> Store:
    p = Path(folder_or_file)
    return Store(p / STORE_NAME if p.is_dir() or not p.suffix else p)
