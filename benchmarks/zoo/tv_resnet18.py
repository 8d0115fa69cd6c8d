"""torchvision resnet18 (random init, 10 classes, 64x64 images): ReLU(inplace=True) and `out += identity` everywhere."""
import torch

try:
    from torchvision.models import resnet18
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = resnet18(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
