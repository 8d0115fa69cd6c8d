"""torchvision shufflenet_v2_x0_5: channel shuffle (reshape/transpose), chunk."""
import torch

try:
    from torchvision.models import shufflenet_v2_x0_5
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = shufflenet_v2_x0_5(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
