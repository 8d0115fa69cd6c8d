"""Executing variant modules: warm worker subprocesses (the pool), batches, training steps, compiler-line coverage; a worker's main is runners/worker.py, its wire protocol runners/protocol.py."""
