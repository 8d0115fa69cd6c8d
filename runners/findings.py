"""Finding folders: repro.py, variant.py, seed.py, inputs.pt and meta.json for each finding."""
from __future__ import annotations

import hashlib
import json
import platform
import re
import shutil
from pathlib import Path

from codegen_templates import render
from runners.worker import compile_options

COMPILER_BUG_KINDS = ("miscompile", "seed-miscompile", "compile-crash", "run-crash", "timeout",
                      "device-mismatch", "config-mismatch")
INFO_KINDS = ("unsound-rewrite", "nondeterministic", "slow-variant")


def signature(f: dict) -> str:
    """Findings with the same signature are one underlying bug: kind, backend, device, the op
    pattern of the (minimized, where known) program, the rules involved and the error type."""
    ops = f.get("min_ops") or f.get("ops") or []
    parts = [f["kind"], f.get("backend", ""), f.get("device", ""), ",".join(sorted(set(ops))),
             ",".join(sorted(f.get("rules", []))), (f.get("error") or {}).get("type", ""),
             f.get("sweep", "")]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def _repro_source(variant_src: str, f: dict) -> str:
    head = variant_src.split('\nif __name__ == "__main__":')[0]
    head = re.sub(r'INPUTS_FILE = Path\(__file__\)\.with_name\(.*\)',
                  'INPUTS_FILE = Path(__file__).with_name("inputs.pt")', head)
    backend, opts = compile_options(f.get("backend", "inductor"))
    config = opts.pop("options", {})
    context = [f"verdict: {f.get('detail', '')}"] if f.get("detail") else []
    if f.get("input_set"):
        context.append(f"input set: {f['input_set']}")
    return head.rstrip() + "\n\n" + render(
        "repro_main.py.j2", kind=f["kind"], backend=backend, options=opts, device=f.get("device", "cpu"),
        rules=f.get("rules", []), inductor_config=config, context_lines=context)


def collect_env() -> str:
    try:
        from torch.utils.collect_env import get_pretty_env_info
        return get_pretty_env_info()
    except Exception as e:  # collect_env shells out; never fail a finding for it
        return f"collect_env failed: {e}"


_ENV_CACHE: dict = {}


def versions() -> dict:
    if not _ENV_CACHE:
        import torch
        v = {"torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform()}
        try:
            import triton  # noqa: F401
            v["triton"] = triton.__version__
        except Exception:
            v["triton"] = None
        _ENV_CACHE.update(v)
    return dict(_ENV_CACHE)


def write_finding(out: Path, fid: str, f: dict, bundle: Path, manifest: dict, *, env_text: str | None = None) -> Path:
    """Write OUT/findings/<fid>/ for finding `f`; returns the folder."""
    d = out / "findings" / fid
    d.mkdir(parents=True, exist_ok=True)
    variant = next(v for v in manifest["variants"] if v["id"] == f["variant"])
    seed = next(v for v in manifest["variants"] if v["graph"] == variant["graph"] and v["seed"])
    graph = next(g for g in manifest["graphs"] if g["id"] == variant["graph"])
    shutil.copy(bundle / variant["file"], d / "variant.py")
    shutil.copy(bundle / seed["file"], d / "seed.py")
    shutil.copy(bundle / graph["inputs_file"], d / graph["inputs_file"])
    failing = f.get("failing_inputs")
    if failing and Path(failing).is_file():
        shutil.copy(failing, d / "inputs.pt")
    else:
        shutil.copy(bundle / graph["inputs_file"], d / "inputs.pt")
    src = (bundle / variant["file"]).read_text()
    if f.get("minimized_file") and Path(f["minimized_file"]).is_file():
        shutil.copy(f["minimized_file"], d / "minimized.py")
        src = Path(f["minimized_file"]).read_text()
    (d / "repro.py").write_text(_repro_source(src, f))
    for name, text in (f.get("artifacts") or {}).items():
        (d / name).write_text(text)
    meta = {k: v for k, v in f.items() if k not in ("failing_inputs", "minimized_file", "artifacts")}
    meta.update({"versions": versions(), "model": manifest.get("model"), "graph": variant["graph"],
                 "collect_env": env_text if env_text is not None else collect_env()})
    (d / "meta.json").write_text(json.dumps(meta, indent=1, default=str))
    return d
