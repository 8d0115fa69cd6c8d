"""HTML report of a campaign folder (its SQLite store) or of run folders: one self-contained file.

Findings grouped by signature with their repro code, counts and sightings; inline-SVG charts of
findings per rule family, op, backend and device and of variants checked per minute; the rules
that never fired. No JavaScript, no network: the page is the file.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

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
    if (folder / STORE_NAME).is_file():
        return _collect_campaign(folder)
    return _collect_runs(folder)


def _collect_campaign(folder: Path) -> dict:
    from runners.campaign.store import Store
    with Store(folder / STORE_NAME) as store:
        meta = store.meta()
        jobs = []
        for j in store.jobs():
            res = j.get("result") or {}
            jobs.append({
                "key": j["key"], "model": j["model"], "rules_label": "+".join(j["rule_set"] or []) or "default",
                "backend": j["backend"], "device": j["device"], "seed": j["seed"], "status": j["status"],
                "started": j["started"], "finished": j["finished"], "seconds": j["seconds"],
                "variants": j["variants"] or 0, "executed": j["executed"] or 0, "run_dir": j["run_dir"],
                "error": j["error"], "rules": (res.get("rules") or {}), "torch": j["torch_version"],
                "host": j["host"]})
        groups = store.findings()
    return {"kind": "campaign", "title": f"campaign {meta.get('name') or folder.name}", "folder": folder,
            "meta": meta, "jobs": jobs, "groups": groups}


def _collect_runs(folder: Path) -> dict:
    from runners.findings.write import signature
    from runners.records import COMPILER_BUG_KINDS
    runs = [r.parent for r in sorted(folder.rglob("report.json")) if (r.parent / "bundle" / "manifest.json").is_file()]
    if not runs:
        raise NoResults(f"{folder}: neither a campaign folder ({STORE_NAME}) nor a run folder "
                        f"(report.json beside bundle/manifest.json)")
    jobs, groups = [], {}
    for rd in runs:
        rep = _read_json(rd / "report.json") or {}
        man = _read_json(rd / "bundle" / "manifest.json") or {}
        st = rep.get("stats") or {}
        finished = (rd / "report.json").stat().st_mtime
        gen = sum(v for k, v in (st.get("timings") or {}).items() if k in ("load", "rules", "capture", "lift",
                                                                          "saturate", "extract", "render"))
        seconds = gen + float(st.get("wall_seconds") or 0)
        rules = man.get("rules") or {}
        jobs.append({
            "key": str(rd), "model": rep.get("model") or man.get("model"), "rules_label": "(run)",
            "backend": "/".join(st.get("backends") or []), "device": "/".join(st.get("devices") or []),
            "seed": man.get("seed"), "status": "done", "started": finished - seconds, "finished": finished,
            "seconds": seconds, "variants": (rep.get("variants") or 0) * max(1, len(st.get("backends") or [1])),
            "executed": rep.get("executed") or 0, "run_dir": str(rd), "error": None,
            "rules": {k: rules.get(k) for k in ("names", "families", "fired", "numerics")},
            "torch": rep.get("torch_version"), "host": None})
        for f in rep.get("findings") or []:
            sig = f.get("signature") or signature(f)
            g = groups.get(sig)
            if g is None:
                g = groups[sig] = {
                    "signature": sig, "kind": f["kind"], "compiler_bug": int(f["kind"] in COMPILER_BUG_KINDS),
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
    return {"kind": "run" if len(runs) == 1 else "runs", "title": title, "folder": folder, "meta": {},
            "jobs": jobs, "groups": ordered}


# ---------------------------------------------------------------------------------------------
# Charts (geometry here, drawing in the template)
# ---------------------------------------------------------------------------------------------

def hbar_chart(title: str, rows: list[tuple[str, list[int]]], series: list[tuple[str, str]],
               width: int = 460, note: str = "") -> dict:
    """Horizontal stacked bars: rows of (label, [value per series])."""
    rows = sorted(rows, key=lambda r: (-sum(r[1]), r[0]))
    hidden = max(0, len(rows) - MAX_BARS)
    rows = rows[:MAX_BARS]
    label_w, row_h, top = 150, 22, 8
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
        bars.append({"y": y, "label": label if len(label) <= 22 else label[:21] + "…", "full": label,
                     "segs": segs, "total": sum(vals), "tx": round(x + 5, 1)})
    return {"title": title, "width": width, "height": top * 2 + max(1, len(rows)) * row_h, "bars": bars,
            "series": series, "label_w": label_w, "row_h": row_h, "empty": not rows, "hidden": hidden,
            "note": note}


def _m(x: float, mss: bool = False) -> str:
    """Minutes as a tick label: 5, 90, or 1:30 (always m:ss with `mss`)."""
    if not mss and abs(x - round(x)) < 1e-6:
        return f"{round(x)}"
    sec = round(x * 60)
    return f"{sec // 60}:{sec % 60:02d}"


def time_chart(jobs: list[dict], width: int = 940, height: int = 190) -> dict:
    """Variants checked per time bin (bars), from when each job finished."""
    done = [j for j in jobs if j.get("finished") and j["status"] == "done"]
    if not done:
        return {"empty": True, "width": width, "height": 40, "title": "Variants checked per minute"}
    t0 = min(j["started"] or j["finished"] for j in done)
    t1 = max(j["finished"] for j in done)
    span_min = max((t1 - t0) / 60.0, 1e-9)
    bin_min = 1.0
    for b in (1 / 6, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 240, 480, 1440):
        bin_min = b
        if span_min / b <= 40:
            break
    nbins = max(1, int(span_min // bin_min) + 1)
    counts = [0.0] * nbins
    for j in done:
        counts[min(nbins - 1, int((j["finished"] - t0) / 60.0 // bin_min))] += j["variants"]
    rates = [c / bin_min for c in counts]
    left, bottom, top = 56, 28, 14
    pw, ph = width - left - 16, height - bottom - top
    vmax = max(rates) or 1.0
    bw = min(pw / nbins, 48.0)
    pw = bw * nbins
    bars = []
    for i, r in enumerate(rates):
        h = ph * r / vmax
        bars.append({"x": round(left + i * bw + 1, 1), "w": round(max(bw - 2, 1), 1),
                     "y": round(top + ph - h, 1), "h": round(h, 1),
                     "tip": f"minutes {_m(i * bin_min)}-{_m((i + 1) * bin_min)}: {r:.1f} variants/min"})
    ticks = []
    step = max(1, nbins // 10)
    for i in range(0, nbins + 1, step):
        ticks.append({"x": round(left + i * bw, 1), "label": _m(i * bin_min, mss=bin_min < 1)})
    yticks = [{"y": round(top + ph - ph * f, 1), "label": f"{vmax * f:.3g}"} for f in (0, 0.5, 1.0)]
    total = sum(j["variants"] for j in done)
    return {"empty": False, "width": width, "height": height, "bars": bars, "ticks": ticks, "yticks": yticks,
            "left": left, "top": top, "ph": ph, "pw": pw, "color": RATE_COLOR,
            "xlabel": "minutes since start" if bin_min >= 1 else "time since start (m:ss)",
            "title": f"Variants checked per minute ({_m(bin_min)}-minute bins)" if bin_min >= 1 else
                     f"Variants checked per minute ({round(bin_min * 60)}-second bins)",
            "note": f"{total} variants in {span_min:.1f} min, {total / span_min:.1f} per minute on average"}


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
    op_rows: dict[str, list[int]] = {}
    be_rows: dict[str, list[int]] = {}
    dev_rows: dict[str, list[int]] = {}
    kind_rows: dict[str, list[int]] = {}
    cards = []
    for gi, g in enumerate(groups):
        idx = 0 if g["compiler_bug"] else 1
        fams = sorted({families.get(r, "?") for r in g["rules"]}) or ["(none: seed program)"]
        for f in fams:
            fam_rows.setdefault(f, [0, 0])[idx] += 1
        for op in g["ops"] or ["(no ops)"]:
            op_rows.setdefault(op, [0, 0])[idx] += 1
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
        cards.append({
            "signature": g["signature"], "kind": g["kind"], "bug": bool(g["compiler_bug"]),
            "backend": g["backend"], "device": g["device"], "rules": g["rules"], "ops": g["ops"],
            "families": fams, "detail": g["detail"] or ex.get("detail") or "", "count": g["count"], "jobs": g["jobs"],
            "first_seen": _fmt_time(g.get("first_seen")), "last_seen": _fmt_time(g.get("last_seen")),
            "models": sorted({s["model"] for s in sightings}), "sightings": sightings[:50],
            "more_sightings": max(0, len(sightings) - 50), "code": repro_code, "code_truncated": truncated,
            "code_path": _rel(repro_path, html_dir), "code_is_repro": bool(repro_path and repro_path.endswith("repro.py")),
            "max_abs_err": ex.get("max_abs_err"), "error_type": (ex.get("error") or {}).get("type"),
        })
    series = [("compiler-bug candidates", BUG_COLOR), ("notes", NOTE_COLOR)]
    charts = [
        hbar_chart("Findings per rule family", list(fam_rows.items()), series,
                   note="distinct findings (signatures); a finding counts once for each family of its rules"),
        hbar_chart("Findings per op", list(op_rows.items()), series, note="distinct findings whose program uses the op"),
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
    failed = [{"model": Path(j["model"] or "?").name, "status": j["status"], "rules": j["rules_label"],
               "backend": j["backend"], "device": j["device"], "seed": j["seed"],
               "run_dir": _rel(j["run_dir"], html_dir), "error": (j["error"] or "")[-3000:]}
              for j in jobs if j["status"] not in ("done", "running", "retry")]
    done = [j for j in jobs if j["status"] == "done"]
    starts = [j["started"] for j in jobs if j.get("started")]
    ends = [j["finished"] for j in jobs if j.get("finished")]
    n_bugs = sum(1 for g in groups if g["compiler_bug"])
    summary = [
        ("jobs done", f"{len(done)} / {len(jobs)}"),
        ("failed jobs", str(len(failed))),
        ("variants checked", str(sum(j["variants"] for j in done))),
        ("programs executed", str(sum(j["executed"] for j in done))),
        ("compiler-bug candidates", f"{n_bugs} distinct, {sum(g['count'] for g in groups if g['compiler_bug'])} sightings"),
        ("notes", f"{len(groups) - n_bugs} distinct, {sum(g['count'] for g in groups if not g['compiler_bug'])} sightings"),
        ("models", str(len({j['model'] for j in jobs}))),
        ("backends / devices", ", ".join(sorted({j['backend'] or '?' for j in jobs})) + " / " +
         ", ".join(sorted({j['device'] or '?' for j in jobs}))),
        ("rules", f"{len(loaded)} loaded, {len(loaded) - len(never)} fired"),
        ("wall time", f"{(max(ends) - min(starts)) / 60:.1f} min" if starts and ends else "-"),
        ("torch", ", ".join(sorted({j['torch'] for j in jobs if j.get('torch')})) or "-"),
    ]
    return {"title": title or f"eqsat-test: {data['title']}", "folder": str(data["folder"]),
            "generated": _fmt_time(time.time()), "summary": summary, "cards": cards, "charts": charts,
            "time_chart": time_chart(jobs), "never_fired": [{"name": n, "family": loaded[n]} for n in never],
            "rule_rows": rule_rows[:200], "rule_rows_hidden": max(0, len(rule_rows) - 200), "failed": failed,
            "cards_hidden": max(0, len(groups) - MAX_CARDS), "n_groups": len(groups),
            "kind": data["kind"], "bug_color": BUG_COLOR, "note_color": NOTE_COLOR}


def render_html(view: dict) -> str:
    import jinja2
    from codegen_templates import TEMPLATES_DIR
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
