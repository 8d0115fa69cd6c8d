"""What a naive tester does for one variant, in a fresh process: import torch, run eager, run
torch.compile, compare. Used by benchmarks/throughput.py as the baseline (one process per variant).

    python benchmarks/naive_check.py VARIANT.py [--backend inductor]

Prints one line: OK or MISMATCH (or the exception), exit code 0/1/2.
"""
import importlib.util
import sys


def main() -> int:
    path = sys.argv[1]
    backend = sys.argv[sys.argv.index("--backend") + 1] if "--backend" in sys.argv else "inductor"
    import torch

    spec = importlib.util.spec_from_file_location("variant", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    inputs = mod.get_inputs()
    try:
        with torch.no_grad():
            eager = mod.forward(*inputs)
            got = torch.compile(mod.forward, backend=backend)(*inputs)
    except Exception as e:  # noqa: BLE001
        print(f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
        return 2
    ok = True
    for a, b in zip(eager, got):
        if isinstance(a, torch.Tensor):
            if a.dtype.is_floating_point:
                ok &= bool(torch.allclose(a, b, rtol=1e-3, atol=1e-3, equal_nan=True))
            else:
                ok &= bool(torch.equal(a, b))
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
