"""torchvision mobilenet_v2: inverted residuals, ReLU6(inplace=True)."""
import torch

try:
    from torchvision.models import mobilenet_v2
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = mobilenet_v2(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
