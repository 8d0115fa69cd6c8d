"""A model that runs eagerly but that torch.compile cannot capture: its capture-crash finding, standalone repro, confirmation, results.json and report.json."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from eqsat_test.codegen_templates import render
from eqsat_test.runners.exec.backend_code import backend_code, copy_backend_file, script_options
from eqsat_test.runners.findings.clusters import clustered
from eqsat_test.runners.findings.confirm import confirm_all
from eqsat_test.runners.findings.ledger import load_ledger
from eqsat_test.runners.findings.meta import MetaContext, write_meta
from eqsat_test.runners.findings.triage import annotate
from eqsat_test.runners.findings.write import collect_env
from eqsat_test.runners.protocol import error_info, first_line, versions
from eqsat_test.runners.records import Finding, FindingKind, RunResults, new_finding

FOLDER = "001-capture-crash-model"


def capture_crash(model: Path, out: Path, error: BaseException, *, backend: str, sizes: str, max_elements: int,
                  confirm: bool = True, timeout: float = 300.0) -> tuple[dict, Finding]:
    """Write OUT/findings/001-capture-crash-model/ (a copy of the model file, repro.py, meta.json) for a model
    whose capture raised `error`, confirm it alone from its repro.py (which compiles the model with `backend`),
    and write OUT/results.json. Returns (the report, the finding: a capture-crash, or a flaky note where the repro
    does not reproduce alone)."""
    d = out / "findings" / FOLDER
    d.mkdir(parents=True, exist_ok=True)
    shutil.copy(model, d / model.name)
    copy_backend_file(backend, d)
    prelude, expr = backend_code(backend)
    opts, config = script_options(backend)
    if config:
        opts["options"] = config
    (d / "repro.py").write_text(render(
        "repro_capture.py.j2", model_file=model.name, backend_label=backend, backend_expr=expr,
        backend_prelude=prelude, options=opts, sizes=sizes, max_elements=max_elements,
        error_line=first_line(error)))
    f = new_finding(FindingKind.CAPTURE_CRASH, {
        "variant": "model", "graph": None, "backend": backend, "device": "cpu", "rules": [], "mode": "model",
        "ops": [], "seed": True}, error=error_info(error), detail=f"torch.compile raises while Dynamo traces the "
        f"model, which eager runs: {first_line(error)}", id=FOLDER, repro=str(d / "repro.py"))
    (f,) = annotate([f])
    write_meta(d, f, MetaContext(versions=versions(), model=str(model), collect_env=collect_env()))
    if confirm:  # alone, in a fresh process, from its repro.py (a flaky note where it does not reproduce)
        (f,), _ = confirm_all([f], out, timeout=timeout, warm=False)
    found, clusters = clustered([f], str(model), load_ledger())
    f = found[0]
    bug = f.kind == FindingKind.CAPTURE_CRASH
    report = {"clusters": [c.to_dict() for c in clusters], "note_groups": [], "model": str(model),
              "torch_version": versions()["torch"], "variants": 0, "executed": 0, "sizes": None, "partial": False,
              "findings": [],  # (RunResults' findings)
              "stats": {"captured": False, "compiler_bugs": int(bug), "eager_bugs": 0, "notes": int(not bug),
                        "root_causes": len(clusters), "internal_errors": 0}}
    results = RunResults(report=report, findings=(f,), raw=())
    results.write(out)
    report = results.report_dict()
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))  # as every run's ending writes it
    return report, f
