"""torchvision densenet121: concatenated feature maps, in-place ReLU inside dense layers."""
import torch

try:
    from torchvision.models import densenet121
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = densenet121(num_classes=10).eval()
example_inputs = (torch.randn(1, 3, 64, 64),)
