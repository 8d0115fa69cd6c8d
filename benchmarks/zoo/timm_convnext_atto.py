"""timm convnext_atto: depthwise convolutions, LayerNorm2d, GRN-free blocks."""
import torch

try:
    import timm
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs timm (pip install timm): {e}") from None

torch.manual_seed(0)
model = timm.create_model("convnext_atto", pretrained=False, num_classes=10).eval()
example_inputs = (torch.randn(1, 3, 64, 64),)
