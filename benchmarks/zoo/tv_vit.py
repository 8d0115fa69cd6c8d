"""torchvision VisionTransformer (small config): class token, nn.MultiheadAttention."""
import torch

try:
    from torchvision.models import VisionTransformer
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs torchvision (pip install torchvision): {e}") from None

torch.manual_seed(0)
model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10).eval()
example_inputs = (torch.randn(2, 3, 32, 32),)
