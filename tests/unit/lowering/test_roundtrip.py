"""Lift -> lower round trips: a lifted-then-lowered graph computes exactly what the original did."""
from __future__ import annotations

import random

import pytest
import torch

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.emit import emit_module
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.lower import to_fx
from eqsat_test.lowering.program import CALL

UNARY = [
    lambda x: x.relu(), lambda x: torch.tanh(x), lambda x: -x, lambda x: x * 2.0, lambda x: x + 1,
    lambda x: torch.nn.functional.gelu(x), lambda x: x.abs().sqrt(), lambda x: torch.exp(x.clamp(max=3)),
    lambda x: x.t().contiguous().t(), lambda x: x.softmax(dim=-1), lambda x: x.sum(dim=0, keepdim=True).expand_as(x),
    lambda x: torch.where(x > 0, x, x * 0.1), lambda x: x.transpose(0, 1).transpose(0, 1),
    lambda x: x.reshape(-1).reshape(x.shape), lambda x: torch.sigmoid(x) * x,
]
BINARY = [
    lambda a, b: a + b, lambda a, b: torch.add(a, b), lambda a, b: a.mul(b), lambda a, b: a - b,
    lambda a, b: torch.maximum(a, b), lambda a, b: a / (b.abs() + 1), lambda a, b: (a @ b.t()) @ b,
    lambda a, b: torch.cat([a, b], dim=1)[:, : a.shape[1]],
]


class RandomModel(torch.nn.Module):
    """A random DAG of elementwise, layout, reduction and matmul ops over two inputs."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        self.plan = []
        for _ in range(rng.randint(3, 10)):
            if rng.random() < 0.5:
                self.plan.append(("u", rng.randrange(len(UNARY)), rng.randrange(100)))
            else:
                self.plan.append(("b", rng.randrange(len(BINARY)), rng.randrange(100), rng.randrange(100)))
        self.w = torch.nn.Parameter(torch.randn(5, 5))

    def forward(self, x, y):
        vals = [x, y, self.w]
        for step in self.plan:
            if step[0] == "u":
                vals.append(UNARY[step[1]](vals[step[2] % len(vals)]))
            else:
                vals.append(BINARY[step[1]](vals[step[2] % len(vals)], vals[step[3] % len(vals)]))
        return vals[-1], vals[-2].sum()


def _same(a, b) -> bool:
    return all(torch.equal(x, y) or (torch.isnan(x).equal(torch.isnan(y)) and torch.equal(x.nan_to_num(), y.nan_to_num()))
               for x, y in zip(a, b))


@pytest.mark.parametrize("seed", range(40))
def test_random_model_round_trip(seed):
    torch.manual_seed(seed)
    m = RandomModel(seed).eval()
    inputs = (torch.randn(5, 5), torch.randn(5, 5))
    graphs = capture(m, inputs)
    for g in graphs:
        lg = lift_fx(g.gm)
        gm = to_fx(lg.program, lg.input_names)
        args = list(g.inputs) + list(lg.constants.values())
        with torch.no_grad():
            assert _same(g.gm(*g.inputs), gm(*args))


def test_spellings_are_kept_apart(tmp_path):
    class M(torch.nn.Module):
        def forward(self, x, y):
            return x + y, torch.add(x, y), x.add(y)

    g = capture(M(), (torch.randn(3), torch.randn(3)))[0]
    lg = lift_fx(g.gm)
    calls = sorted(n.name for n in lg.program.nodes if n.kind == CALL)
    assert calls == ["Tensor.add", "operator.add", "torch.add"]
    src = emit_module(to_fx(lg.program, lg.input_names), title="t", inputs_file="i.pt", input_names=lg.input_names)
    assert "l_x_ + l_y_" in src and "torch.add(l_x_, l_y_)" in src and "l_x_.add(l_y_)" in src


def test_graph_breaks_give_each_graph_its_own_inputs():
    class M(torch.nn.Module):
        def forward(self, x):
            y = x.relu() * 2
            print("graph break")
            return y.sum(dim=0) + 1

    graphs = capture(M(), (torch.randn(4, 3),))
    assert len(graphs) == 2
    assert graphs[1].inputs[0].shape == (4, 3)  # the second graph received y, not x
    for g in graphs:
        lg = lift_fx(g.gm)
        assert _same(g.gm(*g.inputs), to_fx(lg.program, lg.input_names)(*g.inputs))


def test_random_ops_stay_distinct_and_inplace_graphs_are_marked():
    class M(torch.nn.Module):
        def forward(self, x):
            a = torch.nn.functional.dropout(x, 0.5, training=True)
            b = torch.nn.functional.dropout(x, 0.5, training=True)
            return a + b

    lg = lift_fx(capture(M(), (torch.randn(8),))[0].gm)
    assert sum(1 for n in lg.program.nodes if n.kind == CALL and "dropout" in n.name) == 2
    assert not lg.mutating

    class Inplace(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            y.add_(1)
            y.add_(1)
            return y

    g = capture(Inplace(), (torch.randn(4),))[0]
    lg = lift_fx(g.gm)
    assert lg.mutating
    assert sum(1 for n in lg.program.nodes if n.name == "Tensor.add_") == 2  # not merged
    assert _same(g.gm(*g.inputs), to_fx(lg.program, lg.input_names)(*g.inputs))
