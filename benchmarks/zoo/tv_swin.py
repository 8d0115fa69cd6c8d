"""torchvision SwinTransformer (small config): shifted windows with masks made in forward."""
import torch

try:
    from torchvision.models import SwinTransformer
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4], num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 32, 32),)
