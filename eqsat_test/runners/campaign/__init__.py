"""Campaigns: the spec, local and Ray executors, the SQLite store, the HTML report and rule statistics."""
