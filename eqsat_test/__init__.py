"""eqsat-test: find silent mis-compilations in torch.compile by running many equivalent variants of a model.

Sub-packages, in pipeline order: lowering (load, capture, lift, lower, emit), rewrite (e-graph, rules'
compiler, saturation, extraction), rules (the built-in rule library), codegen_templates (Jinja templates),
hunt (generated programs and windows of real graphs), runners (execution, oracle, checks, findings,
campaigns, CLI)."""
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]  # the checkout: workers and jobs get it on PYTHONPATH

