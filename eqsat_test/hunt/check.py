"""The check a generated program passes before it is used: its file loads, runs under fake tensors, then runs once eagerly, in time and with some finite output; a program that fails is discarded and counted, never reported."""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import torch

EAGER_SECONDS = 5.0  # an eager run slower than this makes every stage after it slow: discarded


@dataclass(frozen=True)
class Checked:
    """The check's verdict on one program: ok, or the stage that rejected it and why (one line)."""

    ok: bool
    stage: str  # ok, load, fake, eager, slow, degenerate
    reason: str = ""
    eager_seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"ok": self.ok, "stage": self.stage, "reason": self.reason, "eager_seconds": round(self.eager_seconds, 4)}


def check_source(source: str, filename: str = "<generated>", eager_seconds: float = EAGER_SECONDS) -> Checked:
    """Load the model file's text, run it under FakeTensorMode, then once eagerly on get_inputs()."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ns: dict = {"__name__": "eqsat_hunt_program"}
            exec(compile(source, filename, "exec"), ns)  # (a program the generator wrote)
            model = ns["Model"]().eval()
            inputs = ns["get_inputs"]()
        except Exception as e:  # noqa: BLE001 - a file that does not load is discarded, whatever the error
            return Checked(False, "load", _line(e))
        try:
            from torch._subclasses.fake_tensor import FakeTensorMode
            with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True) as mode:
                model(*[mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs])
        except Exception as e:  # noqa: BLE001
            return Checked(False, "fake", _line(e))
        t0 = time.monotonic()
        try:
            with torch.no_grad():
                out = model(*ns["get_inputs"]())
        except Exception as e:  # noqa: BLE001
            return Checked(False, "eager", _line(e), time.monotonic() - t0)
        secs = time.monotonic() - t0
    if secs > eager_seconds:
        return Checked(False, "slow", f"the eager run took {secs:.1f} s (> {eager_seconds:g} s)", secs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    floats = [o for o in outs if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel()]
    if floats and len(floats) == len(outs) and not any(bool(o.isfinite().any()) for o in floats):
        return Checked(False, "degenerate", "every output element is NaN or infinite", secs)
    return Checked(True, "ok", "", secs)


def _line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:300]
