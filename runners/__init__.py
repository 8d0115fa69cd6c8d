"""Execution: workers, the oracle, findings, campaigns, the store, reports and the CLI."""
