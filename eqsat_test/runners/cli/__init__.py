"""The `eqsat-test` command line; the only place that maps exceptions to exit codes."""
