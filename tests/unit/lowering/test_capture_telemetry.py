"""Capture drops telemetry calls that compute nothing (torch._C._log_api_usage_once, kept in graphs by some torch versions)."""
import torch
import torch.fx

from eqsat_test.lowering.capture import _drop_telemetry


def _graph_with(target) -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(target, ("torchvision.models.resnet",))
    g.output((g.call_method("relu", (x,)),))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_an_unread_api_usage_call_is_dropped_and_the_program_is_unchanged():
    gm = _graph_with(torch._C._log_api_usage_once)
    _drop_telemetry(gm)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_method", "output"]
    x = torch.randn(5)
    assert torch.equal(gm(x)[0], x.relu())


def test_other_calls_without_users_stay():
    gm = _graph_with(torch._C._set_grad_enabled)
    _drop_telemetry(gm)
    assert any(n.target is torch._C._set_grad_enabled for n in gm.graph.nodes)

