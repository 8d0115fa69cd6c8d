"""eqsat-test: find silent mis-compilations in torch.compile by running many equivalent variants of a model.

Sub-packages, in pipeline order: lowering (load, capture, lift, lower, emit), rewrite (e-graph, rules'
compiler, saturation, extraction), rules (the built-in rule library), codegen_templates (Jinja templates),
runners (execution, oracle, checks, findings, campaigns, CLI)."""
