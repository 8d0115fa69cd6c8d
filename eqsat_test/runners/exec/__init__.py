"""Executing variant modules: the worker protocol, warm worker subprocesses, the pool and batches."""
