"""timm efficientnet_b0: SiLU, squeeze-excitation, timm's own BatchNormAct2d."""
import torch

try:
    import timm
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs timm (pip install timm): {e}") from None

torch.manual_seed(0)
model = timm.create_model("efficientnet_b0", pretrained=False, num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
