"""timm deit_tiny_distilled_patch16_224 at 32x32: class and distillation tokens."""
import torch

try:
    import timm
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs timm (pip install timm): {e}") from None

torch.manual_seed(0)
model = timm.create_model("deit_tiny_distilled_patch16_224", pretrained=False, num_classes=10, img_size=32, patch_size=8, depth=2).eval()
example_inputs = (torch.randn(2, 3, 32, 32),)
