"""What a naive tester does per variant: load it, run eager, run torch.compile, compare. Used by
benchmarks/throughput.py as the baselines: one fresh process per variant, or one process that
checks its variants one after another (a fresh `torch.compile`, after `torch._dynamo.reset()`).

    python benchmarks/naive_check.py VARIANT.py [VARIANT.py ...] [--backend inductor]

Prints one line per variant: OK or MISMATCH (or ERROR and the exception); exit code 0, or 1 if
any variant mismatched, or 2 if any raised.
"""
import importlib.util
import sys


def check(path: str, backend: str) -> str:
    import torch

    spec = importlib.util.spec_from_file_location("variant", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    inputs = mod.get_inputs()
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            eager = mod.forward(*inputs)
            got = torch.compile(mod.forward, backend=backend)(*inputs)
    except Exception as e:  # noqa: BLE001
        return f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    ok = True
    for a, b in zip(eager, got):
        if isinstance(a, torch.Tensor):
            if a.dtype.is_floating_point:
                ok &= bool(torch.allclose(a, b, rtol=1e-3, atol=1e-3, equal_nan=True))
            else:
                ok &= bool(torch.equal(a, b))
    return "OK" if ok else "MISMATCH"


def main() -> int:
    args = sys.argv[1:]
    backend = "inductor"
    if "--backend" in args:
        i = args.index("--backend")
        backend = args[i + 1]
        del args[i:i + 2]
    words = []
    for path in args:
        words.append(check(path, backend))
        print(words[-1], flush=True)
    return 2 if any(w.startswith("ERROR") for w in words) else 1 if "MISMATCH" in words else 0


if __name__ == "__main__":
    sys.exit(main())
