"""runners/protocol.py's reseed: torch.manual_seed's draws, without the stack trace torch.manual_seed captures on every call to queue the seed for CUDA where no GPU can be used."""
from __future__ import annotations

import traceback

import pytest
import torch

from eqsat_test.runners import protocol
from eqsat_test.runners.protocol import reseed


def test_reseed_draws_what_torch_manual_seed_draws():
    for seed in (0, 7):
        torch.manual_seed(seed)
        want = (torch.rand(5), torch.randn(3, dtype=torch.float64), torch.randint(0, 100, (4,)))
        torch.rand(9)  # the generator moved on
        reseed(seed)
        got = (torch.rand(5), torch.randn(3, dtype=torch.float64), torch.randint(0, 100, (4,)))
        assert all(torch.equal(a, b) for a, b in zip(want, got))


@pytest.mark.skipif(torch.cuda.is_available(), reason="with a GPU, reseed is torch.manual_seed itself")
def test_without_a_gpu_reseed_captures_no_stack(monkeypatch):
    def no_stacks(*a, **k):
        raise AssertionError("a stack was captured")
    monkeypatch.setattr(traceback, "format_stack", no_stacks)
    protocol.no_accelerator.cache_clear()  # decided again, here
    reseed(3)
    with pytest.raises(AssertionError, match="a stack was captured"):
        torch.manual_seed(3)  # what reseed spares: torch's own call queues the seed for CUDA with a stack
