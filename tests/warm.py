"""A warm interpreter for the tests: imports torch and eqsat-test once, then runs each command it is sent in a fresh process forked from itself.

A command line or a script run this way is a real process of its own (its own pid, session, exit status, stdout
and stderr files, working folder), running the same code as `eqsat-test ...` or `python script.py` would, without
the 4-5 CPU-seconds of imports that each fresh interpreter pays (tests/conftest.py, `warm_run`). Forking is safe
here: after these imports the interpreter has one thread, and nothing has run on torch yet.

Protocol (one test process talks to one server, one command at a time), a JSON line each way:
  in:  {"argv": [...], "cli": true|false, "cwd": "...", "out": "file", "err": "file", "env": {...}}
  out: {"pid": N}, then {"rc": N} once the child has ended (a signal: -N, as subprocess reports it)
"""
from __future__ import annotations

import atexit
import json
import os
import runpy
import sys

from eqsat_test.runners.exec.prover import exit_status

PROJECT = {"benchmarks", "codegen_templates", "lowering", "rewrite", "rules", "runners"}


def _child(req: dict) -> int:
    """In the forked child: become the command, run it, return its exit status."""
    os.setsid()  # its own process group: a timeout kills the command with everything it started
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        os.dup2(os.open(path, flags, 0o644), fd)
    os.chdir(req["cwd"])
    os.environ.update(req.get("env") or {})
    sys.argv = list(req["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))  # as the interpreter sets it for a script
    def run() -> None:
        if req.get("cli"):
            from eqsat_test.runners.cli.main import main
            main(sys.argv[1:])
        else:  # a script starts with torch imported, nothing of eqsat-test (as in a fresh interpreter)
            for name in [m for m in sys.modules if m.split(".")[0] in PROJECT]:
                del sys.modules[name]
            runpy.run_path(sys.argv[0], run_name="__main__")
    return exit_status(run)


def serve() -> None:
    import torch  # noqa: F401  (the imports this server exists to pay once)
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401

    import eqsat_test.runners.cli.main  # noqa: F401
    import eqsat_test.runners.pipeline  # noqa: F401
    reply = sys.stdout
    print(json.dumps({"ready": os.getpid()}), file=reply, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(req)
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    atexit._run_exitfuncs()  # what a normal exit runs (the worker pool's clean-up)
                finally:
                    os._exit(code & 0xFF)
        print(json.dumps({"pid": pid}), file=reply, flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"rc": os.waitstatus_to_exitcode(status)}), file=reply, flush=True)


if __name__ == "__main__":  # (a spawned multiprocessing child imports this file as __mp_main__: no server there)
    serve()
