"""timm resnet18d: deep stem, average-pool downsampling in the shortcut."""
import torch

try:
    import timm
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs timm (pip install timm): {e}") from None

torch.manual_seed(0)
model = timm.create_model("resnet18d", pretrained=False, num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 64, 64),)
