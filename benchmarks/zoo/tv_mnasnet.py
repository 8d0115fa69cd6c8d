"""torchvision mnasnet0_5: depthwise separable convolutions, batch norm momentum of its own."""
import torch

try:
    from torchvision.models import mnasnet0_5
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = mnasnet0_5(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
