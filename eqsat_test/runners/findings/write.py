"""Finding folders: repro.py, variant.py, seed.py, inputs.pt and meta.json for each finding."""
from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.runners.checks.devices import device_repro_main
from eqsat_test.runners.exec.backend_code import backend_code, copy_backend_file, script_options
from eqsat_test.runners.findings.meta import MetaContext, write_meta
from eqsat_test.runners.oracle.grad import COTANGENT_SEED, GRAD_SEED
from eqsat_test.runners.protocol import versions
from eqsat_test.runners.records import Finding, FindingKind, as_finding


def signature(f: Finding | Mapping) -> str:
    """Findings with the same signature are one underlying bug: kind, backend, device, the op
    pattern of the (minimized, where known) program, the rules involved and the error type.

    Once minimized (`min_ops` set) the rules are left out and seed-miscompile counts as
    miscompile: the minimized program is the evidence, and rewrite paths (or none, for the seed)
    that shrink to the same op pattern on the same backend and device are the same compiler bug,
    not one bug per rule combination. Unminimized, `ops` is the whole graph's op list (the same
    for every variant of a graph), so the rules are what tells different variants apart.
    Minimized op names are compared by their base name (`torch.relu`, `Tensor.relu` and
    `torch.nn.functional.relu` are all `relu`): spelling rewrites reach the same compiled code."""
    f = as_finding(f)
    minimized = f.min_ops is not None
    ops = [o.rsplit(".", 1)[-1] for o in f.min_ops or []] if minimized else (f.ops or [])
    kind = FindingKind.MISCOMPILE.value if minimized and f.kind == FindingKind.SEED_MISCOMPILE else f.kind
    rules = [] if minimized else (f.rules or [])
    parts = [kind, (f.backend or ""), (f.device or ""), ",".join(sorted(set(ops))),
             ",".join(sorted(rules)), (f.error or {}).get("type", ""),
             f.sweep_key or f.sweep or ""]  # "dtype=int8", "sizes", "dynamic": not the exact sizes
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def _repro_source(variant_src: str, f: Finding, minimized: bool = False) -> str:
    head = variant_src.split('\nif __name__ == "__main__":')[0]
    head = re.sub(r'INPUTS_FILE = Path\(__file__\)\.with_name\(.*\)',
                  'INPUTS_FILE = Path(__file__).with_name("inputs.pt")', head)
    if f.kind == FindingKind.DEVICE_MISMATCH:  # compiled on two devices against CPU fp64
        return head.rstrip() + "\n" + device_repro_main(f)
    spec = (f.backend or "inductor")
    prelude, backend_expr = backend_code(spec)
    opts, config = script_options(spec)
    opts.update(f.compile_extra or {})  # e.g. dynamic=True for a finding of the dynamic sweep
    # the verdict of the program this repro holds: the minimized one's own, where it was recorded
    detail = (f.min_detail if minimized else None) or f.detail
    input_set = (f.min_input_set if minimized else None) or f.input_set
    context = [f"verdict: {detail}"] if detail else []
    if input_set:
        context.append(f"input set: {input_set}")
    if f.sweep:
        context.append(f"sweep: {f.sweep} (inputs.pt holds the swept inputs)")
    if f.warmup_file:
        head = head.rstrip() + "\n\n" + render("repro_warmup.py.j2")
    grad = {}
    if f.grad:  # training mode: forward and backward (runners/oracle/grad.py)
        grad = dict(skip=list(f.not_differentiated or []), grad_seed=GRAD_SEED, cotangent_seed=COTANGENT_SEED)
        context.append("training mode: forward and backward" + (f"; the failing gradient: {f.grad_input}"
                                                               if f.grad_input else ""))
    text = head.rstrip() + "\n\n" + render(
        "repro_grad_main.py.j2" if grad else "repro_main.py.j2", kind=f.kind,
        backend="inductor" if spec.startswith("inductor") else spec, backend_label=spec,
        backend_expr=backend_expr, backend_prelude=prelude, options=opts, device=(f.device or "cpu"),
        rules=(f.rules or []), inductor_config=config, context_lines=context,
        referee=f.referee or {}, referee_line=f.referee_line or "",
        extreme_inputs=str(f.input_set or "").startswith("special"), **grad)
    return text.replace("dynamic=true", "dynamic=True").replace("dynamic=false", "dynamic=False")  # JSON -> Python


def collect_env() -> str:
    try:
        from torch.utils.collect_env import get_pretty_env_info
        return get_pretty_env_info()
    except Exception as e:  # collect_env shells out; never fail a finding for it
        return f"collect_env failed: {e}"


def write_finding(out: Path, fid: str, f: Finding, bundle: Path, manifest: Manifest, *, env_text: str | None = None) -> Path:
    """Write OUT/findings/<fid>/ for finding `f`; returns the folder. meta.json comes first and each other
    file on its own: a file that cannot be made leaves `<file>.error.txt` beside the others, never a
    finding lost half-written."""
    d = out / "findings" / fid
    d.mkdir(parents=True, exist_ok=True)
    f = as_finding(f)
    variant = manifest.variant(str(f.variant))
    if f.graph != variant.graph:
        f = f.with_(graph=variant.graph)
    context = MetaContext(versions=versions(), model=manifest.model, sizes=manifest.sizes,
                          collect_env=env_text if env_text is not None else collect_env())
    errors: dict[str, str] = {}

    def step(name: str, fn) -> None:
        try:
            fn()
            (d / f"{name}.error.txt").unlink(missing_ok=True)
        except Exception as e:  # noqa: BLE001 - one file that cannot be made must not lose the finding
            errors[name] = f"{type(e).__name__}: {e}"
            (d / f"{name}.error.txt").write_text(errors[name] + "\n")

    def meta() -> None:
        write_meta(d, f, dataclasses.replace(context, write_errors=dict(errors) or None))

    meta()
    step("files", lambda: _copy_files(d, f, bundle, manifest, variant))
    minimized = bool(f.minimized_file and Path(f.minimized_file).is_file())
    src = Path(str(f.minimized_file)).read_text() if minimized else (bundle / variant.file).read_text()
    step("repro.py", lambda: (d / "repro.py").write_text(_repro_source(src, f, minimized)))
    from eqsat_test.runners.findings.artifacts import write_test_repro  # test_repro.py: a PyTorch-style regression test
    step("test_repro.py", lambda: write_test_repro(d, src, f))
    step("artifacts", lambda: _write_artifacts(d, f))
    if errors:
        meta()
    return d


def _copy_files(d: Path, f: Finding, bundle: Path, manifest: Manifest, variant: Variant) -> None:
    """variant.py, seed.py, the inputs, minimized.py, warmup.pt and a custom backend's file, into d."""
    seed = manifest.variant(manifest.seed_of[variant.graph])
    graph = manifest.graph(variant.graph)
    shutil.copy(bundle / variant.file, d / "variant.py")
    shutil.copy(bundle / seed.file, d / "seed.py")
    shutil.copy(bundle / graph.inputs_file, d / graph.inputs_file)
    failing = f.failing_inputs
    if failing and Path(failing).is_file():
        shutil.copy(failing, d / "inputs.pt")
    else:
        shutil.copy(bundle / graph.inputs_file, d / "inputs.pt")
    if f.warmup_file and Path(f.warmup_file).is_file():  # dynamic sweep: calls before the failing one
        shutil.copy(f.warmup_file, d / "warmup.pt")
    if f.minimized_file and Path(f.minimized_file).is_file():
        shutil.copy(f.minimized_file, d / "minimized.py")
    copy_backend_file((f.backend or "inductor"), d)  # repro.py imports it by path; the copy where that is gone


def _write_artifacts(d: Path, f: Finding) -> None:
    artifacts = dict(f.artifacts or {})
    if "kernel_source.py" not in artifacts and (f.kernel_files or f.kernel_source_file):
        from eqsat_test.runners.checks.devices import kernel_artifacts  # Inductor's generated code, where it left it
        artifacts.update(kernel_artifacts(f))
    for name, text in artifacts.items():
        (d / name).write_text(text)
