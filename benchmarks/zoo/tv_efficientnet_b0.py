"""torchvision efficientnet_b0: SiLU, squeeze-excitation, stochastic depth (off in eval)."""
import torch

try:
    from torchvision.models import efficientnet_b0
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = efficientnet_b0(num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
