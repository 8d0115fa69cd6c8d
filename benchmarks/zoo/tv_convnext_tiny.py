"""torchvision convnext_tiny: depthwise 7x7, permutes around LayerNorm, layer scale."""
import torch

try:
    from torchvision.models import convnext_tiny
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = convnext_tiny(num_classes=10).eval()
example_inputs = (torch.randn(1, 3, 64, 64),)
