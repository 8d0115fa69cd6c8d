"""Findings: signatures, finding folders, triage, minimization and debug artifacts."""
