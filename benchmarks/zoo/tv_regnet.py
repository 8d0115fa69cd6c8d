"""torchvision regnet_y_400mf: group convolutions, squeeze-excitation."""
import torch

try:
    from torchvision.models import regnet_y_400mf
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = regnet_y_400mf(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
