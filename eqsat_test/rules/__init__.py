"""The built-in rule library: one file per rule family, written in the rule DSL (rewrite/ruledsl.py)."""
