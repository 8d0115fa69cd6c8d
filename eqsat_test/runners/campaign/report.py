"""HTML report of a campaign folder (its SQLite store) or of run folders: one self-contained file.

The root causes (clusters) first, then the notes by cause; findings grouped by signature with their
repro code, counts and sightings; inline-SVG charts of root causes per op pattern, findings per rule
family, backend and device, of variants checked over time (cumulative) and of
jobs running at once; the planned jobs and what is left; the rules that never fired. No JavaScript,
no network: the page is the file.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from eqsat_test.lowering.manifest import manifest_or_none
from eqsat_test.runners.findings.clusters import Cluster, merge_clusters, report_clusters, yield_line
from eqsat_test.runners.findings.ledger import group_matches, load_ledger
from eqsat_test.runners.findings.notes import merge_note_groups, report_note_groups
from eqsat_test.runners.records import BUG_KINDS, FindingKind

# Imports inside functions: campaign commands start without torch (findings.write and the
# records it pulls in import it); the store and report load them only when they need them.

STORE_NAME = "campaign.sqlite"
BUG_COLOR, NOTE_COLOR, RATE_COLOR = "#d1495b", "#9aa5b8", "#2f7ed8"
MAX_REPRO_LINES = 300
MAX_BARS = 25
MAX_CARDS = 300  # findings shown in full; the rest are counted (the store and its JSONL export have all)


class NoResults(Exception):
    """A folder with neither a campaign store nor run results."""


# ---------------------------------------------------------------------------------------------
# Collect: a campaign store or run folders -> jobs + finding groups
# ---------------------------------------------------------------------------------------------

def _read_json(p: Path):
    try:
        return json.loads(Path(p).read_text())
    except (OSError, json.JSONDecodeError):
        return None


def collect(folder: str | Path) -> dict:
    folder = Path(folder).resolve()
    data = _collect_campaign(folder) if (folder / STORE_NAME).is_file() else _collect_runs(folder)
    add_ledger_matches(data)
    return data


def add_ledger_matches(data: dict, ledger: str | Path | None = None) -> None:
    """Each group's `ledger`: the ids of the bug-ledger entries (docs/bugs/ledger.toml) its example or
    any sighting matches by op and device (a hint at a known root cause); `data["ledger"]`: those
    entries by id. No ledger file (an installed copy): no matches."""
    entries = load_ledger(ledger)
    used = {i for c in data.get("clusters") or [] for i in c.get("ledger") or []}  # matched by the runs
    for g in data["groups"]:
        g["ledger"] = group_matches([g.get("example")] + [s.get("finding") for s in g.get("sightings") or []], entries)
        used.update(g["ledger"])
    data["ledger"] = {e.id: {"id": e.id, "title": e.title, "repro": str(e.repro_path), "ledger_md": str(e.ledger_md)}
                      for e in entries if e.id in used}


def _collect_campaign(folder: Path) -> dict:
    from eqsat_test.runners.campaign.run import campaign_running, shown_status
    from eqsat_test.runners.campaign.store import Store
    active = campaign_running(folder)
    with Store(folder / STORE_NAME) as store:
        meta = store.meta()
        plan = store.plan()
        jobs = []
        for j in store.jobs():
            res = j.get("result") or {}
            jobs.append({
                "key": j["key"], "model": j["model"], "rules_label": "+".join(j["rule_set"] or []) or "default",
                "backend": j["backend"], "device": j["device"], "seed": j["seed"],
                "status": shown_status(j["status"], active),
                "started": j["started"], "finished": j["finished"], "seconds": j["seconds"],
                "variants": j["variants"] or 0, "executed": j["executed"] or 0, "run_dir": j["run_dir"],
                "error": j["error"], "rules": (res.get("rules") or {}), "torch": j["torch_version"],
                "host": j["host"]})
        groups = store.findings()
        sightings = store.cluster_sightings()
        clusters = [{**c.to_dict(), "sightings": [s for k in (c.key, *c.absorbed) for s in sightings.get(k) or []]}
                    for c in store.clusters()]
        note_groups = [g.to_dict() for g in store.note_groups()]
        oracle_rules = store.oracle_rule_totals()
    return {"kind": "campaign", "title": f"campaign {meta.get('name') or folder.name}", "folder": folder,
            "meta": meta, "jobs": jobs, "groups": groups, "plan": plan, "active": active,
            "clusters": clusters, "note_groups": note_groups, "oracle_rules": oracle_rules}


def _collect_runs(folder: Path) -> dict:
    from eqsat_test.runners.findings.write import signature
    per_run: list = []  # (run folder, its clusters), (its note groups)
    note_groups: list = []
    runs = [r.parent for r in sorted(folder.rglob("report.json")) if (r.parent / "bundle" / "manifest.json").is_file()]
    if not runs:
        raise NoResults(f"{folder}: neither a campaign folder ({STORE_NAME}) nor a run folder "
                        f"(report.json beside bundle/manifest.json)")
    jobs: list = []
    groups: dict = {}
    for rd in runs:
        rep = _read_json(rd / "report.json") or {}
        man = manifest_or_none(rd / "bundle")
        st = rep.get("stats") or {}
        finished = (rd / "report.json").stat().st_mtime
        gen = sum(v for k, v in (st.get("timings") or {}).items() if k in ("load", "rules", "capture", "lift",
                                                                          "saturate", "extract", "render"))
        seconds = gen + float(st.get("wall_seconds") or 0)
        rules = man.to_dict()["rules"] if man is not None else {}  # (the store's record: JSON)
        jobs.append({
            "key": str(rd), "model": rep.get("model") or (man.model if man is not None else None), "rules_label": "(run)",
            "backend": "/".join(st.get("backends") or []), "device": "/".join(st.get("devices") or []),
            "seed": man.seed if man is not None else None, "status": "done", "started": finished - seconds, "finished": finished,
            "seconds": seconds, "variants": (rep.get("variants") or 0) * max(1, len(st.get("backends") or [1])),
            "executed": rep.get("executed") or 0, "run_dir": str(rd), "error": None,
            "rules": {k: rules.get(k) for k in ("names", "families", "fired", "numerics")},
            "torch": rep.get("torch_version"), "host": None})
        per_run += [(rd, c) for c in report_clusters(rep, model=str(rd))]
        note_groups += report_note_groups(rep, model=str(rd))
        for f in rep.get("findings") or []:
            sig = f.get("signature") or signature(f)
            g = groups.get(sig)
            if g is None:
                g = groups[sig] = {
                    "signature": sig, "kind": f["kind"], "compiler_bug": int(f["kind"] in BUG_KINDS),
                    "backend": f.get("backend"), "device": f.get("device"), "rules": sorted(f.get("rules") or []),
                    "ops": sorted(set(f.get("min_ops") or f.get("ops") or [])), "detail": f.get("detail") or "",
                    "count": 0, "jobs": 0, "first_seen": finished, "last_seen": finished, "example": f,
                    "sightings": []}
            n = int(f.get("count", 1) or 1)
            g["count"] += n
            if not any(s["run_dir"] == str(rd) for s in g["sightings"]):
                g["jobs"] += 1
            g["first_seen"], g["last_seen"] = min(g["first_seen"], finished), max(g["last_seen"], finished)
            g["sightings"].append({"signature": sig, "job_key": str(rd), "model": rep.get("model"), "run_dir": str(rd),
                                   "repro": f.get("repro"), "count": n, "seen": finished, "finding": f})
    ordered = sorted(groups.values(), key=lambda g: (-g["compiler_bug"], -g["count"], g["signature"]))
    title = f"run {Path(jobs[0]['model'] or runs[0]).name}" if len(runs) == 1 else f"{len(runs)} runs in {folder.name}"
    sightings: dict[str, list] = {}
    for rd, c in per_run:
        sightings.setdefault(c.key, []).append({"key": c.key, "job_key": str(rd), "model": c.models[0] if c.models else None,
                                                "run_dir": str(rd), "repro": c.repro, "count": c.count})
    clusters = [{**c.to_dict(), "sightings": [s for k in (c.key, *c.absorbed) for s in sightings.get(k) or []]}
                for c in merge_clusters([c for _, c in per_run])]
    return {"kind": "run" if len(runs) == 1 else "runs", "title": title, "folder": folder, "meta": {},
            "jobs": jobs, "groups": ordered, "plan": [], "active": False, "clusters": clusters,
            "note_groups": [g.to_dict() for g in merge_note_groups(note_groups)]}


# ---------------------------------------------------------------------------------------------
# Charts (geometry here, drawing in the template)
# ---------------------------------------------------------------------------------------------

LABEL_CHARS = 32  # longest bar label drawn in full; longer ones are shortened (the full name in a tooltip)
_PREFIXES = (("torch.nn.functional.", "F."), ("torch.Tensor.", "Tensor."), ("torch._C._nn.", "_nn."),
             ("torch.ops.aten.", "aten."), ("torch.special.", "special."), ("torch.linalg.", "linalg."))


def short_label(name: str, limit: int = LABEL_CHARS) -> str:
    """A name that fits `limit` characters: whole where it fits, else with the usual module prefixes
    abbreviated (torch.nn.functional.softmax -> F.softmax) and an aten overload dropped (.default),
    else its last dotted parts after an ellipsis, else its start and an ellipsis."""
    if len(name) <= limit:
        return name
    for long, short in _PREFIXES:
        if name.startswith(long):
            name = short + name[len(long):]
            break
    if len(name) > limit and name.startswith("aten.") and name.count(".") >= 2:
        name = name.rsplit(".", 1)[0]  # aten.foo.default -> aten.foo
    if len(name) <= limit:
        return name
    parts = name.split(".")
    tail = parts[-1]
    if len(tail) + 1 > limit:
        return name[:limit - 1] + "…"
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(tail) + 1 > limit:
            break
        tail = part + "." + tail
    return "…" + tail


def hbar_chart(title: str, rows: list[tuple[str, list[int]]], series: list[tuple[str, str]],
               width: int = 470, note: str = "") -> dict:
    """Horizontal stacked bars: rows of (label, [value per series]); labels shortened to fit, in full
    in each bar's tooltip, the label column as wide as the longest label needs."""
    rows = sorted(rows, key=lambda r: (-sum(r[1]), r[0]))
    hidden = max(0, len(rows) - MAX_BARS)
    rows = rows[:MAX_BARS]
    labels = [short_label(label) for label, _ in rows]
    label_w = min(240, max(90, 7 * max((len(x) for x in labels), default=0) + 14))
    row_h, top = 22, 8
    plot_w = width - label_w - 46
    vmax = max([sum(v) for _, v in rows] or [1]) or 1
    bars = []
    for i, (label, vals) in enumerate(rows):
        y = top + i * row_h
        x = label_w
        segs = []
        for (name, color), v in zip(series, vals):
            w = plot_w * v / vmax
            if v:
                segs.append({"x": round(x, 1), "w": round(max(w, 1.5), 1), "color": color, "tip": f"{label}: {v} {name}"})
            x += w
        bars.append({"y": y, "label": labels[i], "full": label,
                     "segs": segs, "total": sum(vals), "tx": round(x + 5, 1)})
    return {"title": title, "width": width, "height": top * 2 + max(1, len(rows)) * row_h, "bars": bars,
            "series": series, "label_w": label_w, "row_h": row_h, "empty": not rows, "hidden": hidden,
            "note": note}


def _nice_step(span: float, target: int = 8) -> float:
    raw = span / max(1, target)
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400):
        if step >= raw:
            return float(step)
    return 86400.0 * (raw // 86400 + 1)


def _clock(sec: float) -> str:
    """Seconds since start as m:ss, or h:mm:ss past an hour."""
    sec = int(round(sec))
    return f"{sec // 3600}:{sec % 3600 // 60:02d}:{sec % 60:02d}" if sec >= 3600 else f"{sec // 60}:{sec % 60:02d}"


def progress_chart(jobs: list[dict], width: int = 940, height: int = 250) -> dict:
    """Variants checked so far (a rising step line, one step per finished job, each step a point with its
    job in a tooltip) above a strip of jobs running at once, on one time axis since the first start."""
    done = sorted((j for j in jobs if j.get("finished") and j["status"] == "done"), key=lambda j: j["finished"])
    spans = [(j["started"], j["finished"]) for j in jobs if j.get("started") and j.get("finished")]
    title = "Variants checked over time"
    if not done:
        return {"empty": True, "width": width, "height": 40, "title": title}
    t0 = min([a for a, _ in spans] + [j["finished"] for j in done])
    t1 = max([b for _, b in spans] + [j["finished"] for j in done])
    span = max(t1 - t0, 1.0)
    left, right, top = 64, 16, 12
    strip_h, gap, bottom = 46, 30, 34
    pw = width - left - right
    ph = height - top - gap - strip_h - bottom
    total = sum(j["variants"] for j in done)
    vmax = max(total, 1)

    def X(t: float) -> float:
        return round(left + pw * (t - t0) / span, 1)

    def Y(v: float) -> float:
        return round(top + ph - ph * v / vmax, 1)

    path = [f"M{X(t0)},{Y(0)}"]
    points, cum = [], 0
    for j in done:
        x = X(j["finished"])
        path.append(f"H{x}")
        cum += j["variants"]
        path.append(f"V{Y(cum)}")
        points.append({"x": x, "y": Y(cum), "tip": f"{_clock(j['finished'] - t0)}: {Path(j['model'] or '?').name} "
                                                     f"+{j['variants']} variants ({cum} in all)"})
    path.append(f"H{X(t1)}")
    line = "".join(path)
    area = line + f"V{Y(0)}Z"
    # jobs running at once: a step line over the strip
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], e[1]))
    n, peak, run_pts = 0, 0, []
    for t, d in events:
        n += d
        peak = max(peak, n)
        run_pts.append((t, n))
    s_top = top + ph + gap
    rmax = max(peak, 1)

    def RY(k: int) -> float:
        return round(s_top + strip_h - strip_h * k / rmax, 1)

    run = [f"M{X(t0)},{RY(0)}"]
    for t, k in run_pts:
        run += [f"H{X(t)}", f"V{RY(k)}"]
    run.append(f"H{X(t1)}")
    step = _nice_step(span)
    xticks = [{"x": X(t0 + k * step), "label": _clock(k * step)} for k in range(int(span // step) + 1)]
    yticks = [{"y": Y(vmax * f), "label": f"{round(vmax * f):d}"} for f in (0, 0.25, 0.5, 0.75, 1.0)]
    mins = span / 60
    return {"empty": False, "width": width, "height": height, "title": title, "line": line, "area": area,
            "points": points if len(points) <= 400 else [], "run": "".join(run), "xticks": xticks, "yticks": yticks,
            "left": left, "top": top, "pw": pw, "ph": ph, "s_top": s_top, "strip_h": strip_h, "peak": peak,
            "color": RATE_COLOR, "xlabel": "time since the first job started (m:ss)",
            "note": f"{total} variants in {len(done)} jobs over {_clock(span)} (m:ss), "
                    f"{total / mins:.1f} per minute on average; up to {peak} job{'s' if peak != 1 else ''} at once"}


# ---------------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------------

def _rel(path: str | None, html_dir: Path) -> str | None:
    if not path:
        return None
    try:
        return os.path.relpath(path, html_dir)
    except ValueError:
        return path


def _read_text(path: str | None, limit: int = MAX_REPRO_LINES) -> tuple[str | None, bool]:
    if not path or not Path(path).is_file():
        return None, False
    lines = Path(path).read_text(errors="replace").splitlines()
    return "\n".join(lines[:limit]), len(lines) > limit


def _fmt_time(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "-"


def build_view(data: dict, html_path: Path, title: str | None = None) -> dict:
    html_dir = html_path.parent.resolve()
    jobs, groups = data["jobs"], data["groups"]
    families: dict[str, str] = {}
    loaded: dict[str, str] = {}
    fired: dict[str, int] = {}
    for j in jobs:
        r = j.get("rules") or {}
        families.update(r.get("families") or {})
        for n in r.get("names") or []:
            loaded[n] = (r.get("families") or {}).get(n, "?")
        for n, c in (r.get("fired") or {}).items():
            fired[n] = fired.get(n, 0) + int(c or 0)
    in_findings: dict[str, int] = {}
    fam_rows: dict[str, list[int]] = {}
    be_rows: dict[str, list[int]] = {}
    dev_rows: dict[str, list[int]] = {}
    kind_rows: dict[str, list[int]] = {}
    cards = []
    ledger = data.get("ledger") or {}  # known root causes matched by op and device (add_ledger_matches)
    for gi, g in enumerate(groups):
        idx = 0 if g["compiler_bug"] else 1
        fams = sorted({families.get(r, "?") for r in g["rules"]}) or ["(none: seed program)"]
        for f in fams:
            fam_rows.setdefault(f, [0, 0])[idx] += 1
        be_rows.setdefault(g["backend"] or "?", [0, 0])[idx] += 1
        dev_rows.setdefault(g["device"] or "?", [0, 0])[idx] += 1
        kind_rows.setdefault(g["kind"], [0, 0])[idx] += g["count"]
        for r in g["rules"]:
            in_findings[r] = in_findings.get(r, 0) + 1
        if gi >= MAX_CARDS:
            continue
        sightings = []
        repro_code, truncated, repro_path = None, False, None
        for s in g["sightings"]:
            f = s.get("finding") or {}
            variant_file = None
            if s.get("run_dir") and f.get("variant"):
                vf = Path(s["run_dir"]) / "bundle" / f"{f['variant']}.py"
                variant_file = str(vf) if vf.is_file() else None
            if repro_code is None and s.get("repro"):
                repro_code, truncated = _read_text(s["repro"])
                repro_path = s["repro"] if repro_code is not None else None
            sightings.append({"model": Path(s.get("model") or "?").name, "model_path": s.get("model"),
                              "count": s["count"], "variant": f.get("variant"), "seen": _fmt_time(s.get("seen")),
                              "repro": _rel(s.get("repro"), html_dir) if s.get("repro") else None,
                              "repro_abs": s.get("repro"),
                              "variant_file": _rel(variant_file, html_dir), "run_dir": _rel(s.get("run_dir"), html_dir),
                              "input_set": f.get("input_set"), "max_abs_err": f.get("max_abs_err")})
        if repro_code is None:  # notes have no repro: show the variant program instead
            for s in sightings:
                if s["variant_file"]:
                    repro_code, truncated = _read_text(str((html_dir / s["variant_file"]).resolve()))
                    repro_path = str((html_dir / s["variant_file"]).resolve())
                    break
        ex = g.get("example") or {}
        detail = g["detail"] or ex.get("detail") or ""
        if g["kind"] == FindingKind.UNSOUND_REWRITE:  # both sides are eager runs: the seed's and the variant's
            detail = unsound_wording(detail)
        known = [{"id": i, "title": ledger[i]["title"], "md": _rel(ledger[i]["ledger_md"], html_dir),
                  "repro": _rel(ledger[i]["repro"], html_dir)} for i in g.get("ledger") or [] if i in ledger]
        cards.append({
            "ledger": known,
            "signature": g["signature"], "kind": g["kind"], "bug": bool(g["compiler_bug"]),
            "backend": g["backend"], "device": g["device"], "rules": g["rules"], "ops": g["ops"],
            "families": fams, "detail": detail, "count": g["count"], "jobs": g["jobs"],
            "compared": "seed eager vs variant eager" if g["kind"] == FindingKind.UNSOUND_REWRITE else None,
            "first_seen": _fmt_time(g.get("first_seen")), "last_seen": _fmt_time(g.get("last_seen")),
            "models": sorted({s["model"] for s in sightings}), "sightings": sightings[:50],
            "more_sightings": max(0, len(sightings) - 50), "code": repro_code, "code_truncated": truncated,
            "code_path": _rel(repro_path, html_dir), "code_is_repro": bool(repro_path and repro_path.endswith("repro.py")),
            "max_abs_err": ex.get("max_abs_err"), "error_type": (ex.get("error") or {}).get("type"),
        })
    roots, pattern_rows = root_cause_rows(data, html_dir)
    notes = note_rows(data, html_dir)
    series = [("compiler-bug candidates", BUG_COLOR), ("notes", NOTE_COLOR)]
    charts = [
        hbar_chart("Findings per rule family", list(fam_rows.items()), series,
                   note="distinct findings (signatures); a finding counts once for each family of its rules"),
        hbar_chart("Root causes per op pattern", list(pattern_rows.items()), [("root causes", BUG_COLOR)],
                   note="distinct root causes (clusters) by the ops of their minimized program (else the ops every "
                        "failing program's output depends on, marked *)"),
        hbar_chart("Findings per backend", list(be_rows.items()), series),
        hbar_chart("Findings per device", list(dev_rows.items()), series),
        hbar_chart("Sightings per kind", list(kind_rows.items()), series, note="all sightings, duplicates included"),
    ]
    statuses: dict[str, int] = {}
    for j in jobs:
        statuses[j["status"]] = statuses.get(j["status"], 0) + 1
    job_rows = [(s, [n]) for s, n in statuses.items()]
    charts.append(hbar_chart("Jobs by outcome", job_rows, [("jobs", RATE_COLOR)]))
    never = sorted((n for n in loaded if not fired.get(n)), key=lambda n: (loaded[n], n))
    rule_rows = sorted(({"name": n, "family": loaded.get(n, families.get(n, "?")), "fired": fired.get(n, 0),
                         "findings": in_findings.get(n, 0)} for n in set(loaded) | set(fired)),
                       key=lambda r: (-r["findings"], -r["fired"], r["name"]))
    unfinished = ("done", "running", "retry", "interrupted", "pending")
    failed = [{"model": Path(j["model"] or "?").name, "status": j["status"], "rules": j["rules_label"],
               "backend": j["backend"], "device": j["device"], "seed": j["seed"],
               "run_dir": _rel(j["run_dir"], html_dir), "error": (j["error"] or "")[-3000:]}
              for j in jobs if j["status"] not in unfinished]
    done = [j for j in jobs if j["status"] == "done"]
    n_bugs = sum(1 for g in groups if g["compiler_bug"])
    plan = plan_view(jobs, data.get("plan") or [])
    clusters = [Cluster.from_dict(c) for c in data.get("clusters") or []]
    summary = [
        ("distinct root causes", f"{len(clusters)}" + (f" ({yield_line(clusters)})" if clusters else "")),
        ("jobs finished", f"{plan['finished']} / {plan['jobs']} planned, {plan['left']} left"
                          + (f" ({plan['running']} running)" if plan["running"] else "")),
        ("failed jobs", str(len(failed))),
        ("variants checked", str(sum(j["variants"] for j in done))),
        ("programs executed", str(sum(j["executed"] for j in done))),
        ("compiler-bug candidates", f"{n_bugs} distinct, {sum(g['count'] for g in groups if g['compiler_bug'])} sightings"),
        ("notes", f"{len(groups) - n_bugs} distinct, {sum(g['count'] for g in groups if not g['compiler_bug'])} sightings"),
        ("models", f"{plan['models_done']} / {plan['models']} planned done, {plan['models_with_results']} with results"),
        ("backends / devices", ", ".join(sorted({j['backend'] or '?' for j in jobs})) + " / " +
         ", ".join(sorted({j['device'] or '?' for j in jobs}))),
        ("rules", f"{len(loaded)} loaded, {len(loaded) - len(never)} fired"),
        ("wall time", wall_time(jobs)),
        ("torch", ", ".join(sorted({j['torch'] for j in jobs if j.get('torch')})) or "-"),
    ]
    last = ((data.get("meta") or {}).get("runs") or [None])[-1]
    if last and last.get("jobs_at_once"):
        summary.append(("jobs at once (last run)", f"{last['jobs_at_once']} (peak {last.get('peak_at_once', '?')}), "
                                                   f"{last.get('jobs_per_run', 1)} workers per job"))
    if any(j["device"] == "cuda" for j in jobs) and last:
        u = last.get("gpu_util")
        summary.append(("GPU busy (last run)", f"{u['mean']:.0f}% mean, {u['max']:.0f}% max, {u['samples']} samples "
                                               f"every {u['interval_s']:.0f} s" if u else "not measured (no nvidia-smi)"))
    return {"title": title or f"eqsat-test: {data['title']}", "folder": str(data["folder"]),
            "generated": _fmt_time(time.time()), "summary": summary, "cards": cards, "charts": charts,
            "time_chart": progress_chart(jobs), "left_jobs": plan["left_rows"][:200],
            "left_hidden": max(0, len(plan["left_rows"]) - 200), "never_fired": [{"name": n, "family": loaded[n]} for n in never],
            "n_loaded": len(loaded), "never_fired_by_family": _by_family(never, loaded),
            "rule_rows": rule_rows[:200], "rule_rows_hidden": max(0, len(rule_rows) - 200), "failed": failed,
            "cards_hidden": max(0, len(groups) - MAX_CARDS), "n_groups": len(groups),
            "root_causes": roots, "note_rows": notes,
            "kind": data["kind"], "bug_color": BUG_COLOR, "note_color": NOTE_COLOR}


def root_cause_rows(data: dict, html_dir: Path) -> tuple[list[dict], dict[str, list[int]]]:
    """The root causes (clusters) as table rows, and how many there are per op pattern (the chart)."""
    ledger = data.get("ledger") or {}
    rows: list = []
    patterns: dict = {}
    for c in data.get("clusters") or []:
        pattern = " ".join(c.get("pattern") or []) or "(no ops)"
        label = pattern if c.get("minimized") else pattern + " *"
        patterns.setdefault(label, [0])[0] += 1
        known = [{"id": i, "title": ledger[i]["title"] if i in ledger else "",
                  "md": _rel(ledger[i]["ledger_md"], html_dir) if i in ledger else None} for i in c.get("ledger") or []]
        sightings = c.get("sightings") or []
        rows.append({"key": c["key"], "kind": c["kind"], "pattern": pattern, "minimized": c.get("minimized"),
                     "symptom": c["symptom"], "input_class": c["input_class"], "backend": c["backend"],
                     "device": c["device"], "count": c["count"], "programs": len(c.get("variants") or []),
                     "jobs": len({s.get("job_key") for s in sightings}) or 1,
                     "models": sorted({Path(m).name for m in (c.get("models") or [])}),
                     "seed_fails": c.get("seed_fails"), "known": known, "detail": c.get("detail") or "",
                     "repro": _rel(c.get("repro"), html_dir) if c.get("repro") else None})
    return rows, patterns


def note_rows(data: dict, html_dir: Path) -> list[dict]:
    """The note groups (one per model, kind and cause) as table rows."""
    rows = []
    for g in data.get("note_groups") or []:
        example = ((g.get("examples") or [""])[0] or "")[:300]
        if g["kind"] == FindingKind.UNSOUND_REWRITE:  # both sides are eager runs: the seed's and the variant's
            example = unsound_wording(example)
        rows.append({"kind": g["kind"], "model": Path(g.get("model") or "?").name, "cause": g["cause"],
                     "count": g["count"], "programs": len(g.get("variants") or []),
                     "devices": "/".join(g.get("devices") or []), "loud": g.get("loud"), "numerics": g.get("numerics"),
                     "example": example, "path": _rel(g.get("path"), html_dir) if g.get("path") else None})
    return rows


def wall_time(jobs: list[dict]) -> str:
    """The time jobs were running: the union of the jobs' own [start, end] intervals, so that the idle time
    between a campaign's runs (a resume the next day) is not counted; first start to last end beside it."""
    spans = sorted((j["started"], j["finished"]) for j in jobs if j.get("started") is not None and j.get("finished"))
    if not spans:
        return "-"
    busy, (a, b) = 0.0, spans[0]
    for s, e in spans[1:]:
        if s > b:
            busy, a, b = busy + (b - a), s, e
        else:
            b = max(b, e)
    busy += b - a
    first_to_last = max(e for _, e in spans) - spans[0][0]
    idle = f"; {first_to_last / 60:.1f} min from first start to last end" if first_to_last - busy > 60 else ""
    return f"{busy / 60:.1f} min with jobs running{idle}"


def _by_family(names: list[str], family: dict[str, str], top: int = 6) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for n in names:
        counts[family.get(n, "?")] = counts.get(family.get(n, "?"), 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


_UNSOUND_WORDS = re.compile(r"\b(compiled|eager)\b")


def unsound_wording(detail: str) -> str:
    """An unsound-rewrite note's verdict says "eager" for the seed's eager output and "compiled" for
    the variant's (the oracle's words for its two sides); both are eager runs: say which."""
    if detail.startswith("variant raises in eager mode"):
        return detail
    return _UNSOUND_WORDS.sub(lambda m: "variant eager" if m.group(1) == "compiled" else "seed eager", detail)


def plan_view(jobs: list[dict], plan: list[dict]) -> dict:
    """Planned jobs and models (the latest campaign run's plan, plus any job recorded outside it),
    finished, left, running; a model is done when all its jobs are finished."""
    by_key = {j["key"]: j for j in jobs}
    rows = {p["key"]: {"key": p["key"], "model": p["model"], "rules": p.get("rules"), "backend": p.get("backend"),
                       "device": p.get("device"), "seed": p.get("seed")} for p in plan}
    for j in jobs:
        rows.setdefault(j["key"], {"key": j["key"], "model": j["model"], "rules": j["rules_label"],
                                   "backend": j["backend"], "device": j["device"], "seed": j["seed"]})
    unfinished = ("running", "retry", "interrupted", "pending")
    models: dict[str, list[bool]] = {}
    left_rows, running = [], 0
    for k, r in rows.items():
        st = (by_key.get(k) or {}).get("status", "pending")
        fin = st not in unfinished
        models.setdefault(r["model"], []).append(fin)
        running += st == "running"
        if not fin:
            left_rows.append({**r, "model": Path(r["model"] or "?").name, "status": st})
    fin = sum(1 for m in models.values() for f in m if f)
    return {"jobs": len(rows), "finished": fin, "left": len(rows) - fin, "running": running,
            "models": len(models), "models_done": sum(1 for m in models.values() if all(m)),
            "models_with_results": sum(1 for m in models.values() if any(m)),
            "left_rows": sorted(left_rows, key=lambda r: (r["status"] != "running", r["model"]))}


def render_html(view: dict) -> str:
    import jinja2

    from eqsat_test.codegen_templates import TEMPLATES_DIR
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(**view)


def write_report(folder: str | Path, out: str | Path | None = None, title: str | None = None) -> Path:
    """Write the HTML report of `folder` (campaign or run folder) to `out` (default FOLDER/report.html)."""
    import click
    folder = Path(folder)
    out = Path(out) if out else folder / "report.html"
    try:
        data = collect(folder)
    except NoResults as e:
        raise click.UsageError(str(e)) from e
    html = render_html(build_view(data, out.resolve(), title=title))
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html)
    os.replace(tmp, out)
    return out
