"""A model eager runs and torch.compile cannot capture: a custom op whose fake (meta) implementation checks a bound
the real one does not (the real op clips), so tracing with fake tensors raises."""
import torch


@torch.library.custom_op("eqsat_models::take_rows", mutates_args=())
def take_rows(x: torch.Tensor, n: int) -> torch.Tensor:
    return x[: min(n, x.shape[0])].clone()


@take_rows.register_fake
def _(x, n):
    if n > x.shape[0]:
        raise ValueError(f"take_rows: n={n} is more than the {x.shape[0]} rows")
    return x.new_empty((n, *x.shape[1:]))


class Model(torch.nn.Module):
    def forward(self):
        x = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)  # no inputs: made here
        return take_rows(x.relu(), 8) * 2


def get_inputs():
    return []
