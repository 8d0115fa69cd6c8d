"""torchvision squeezenet1_1: fire modules, concatenation, in-place ReLU."""
import torch

try:
    from torchvision.models import squeezenet1_1
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = squeezenet1_1(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
