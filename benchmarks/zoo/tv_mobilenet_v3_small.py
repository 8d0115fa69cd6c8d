"""torchvision mobilenet_v3_small: hardswish, squeeze-excitation, in-place activations."""
import torch

try:
    from torchvision.models import mobilenet_v3_small
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = mobilenet_v3_small(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
