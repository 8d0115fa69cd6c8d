"""torchvision resnet50 (random init, 10 classes): bottleneck blocks with in-place ReLU and residual adds."""
import torch

try:
    from torchvision.models import resnet50
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = resnet50(num_classes=10).eval()
example_inputs = (torch.randn(1, 3, 64, 64),)
