"""Swin transformer (Hugging Face): shifted windows, relative position bias, patch merging."""
import torch

try:
    from transformers import SwinConfig, SwinForImageClassification
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = SwinConfig(image_size=32, patch_size=4, num_channels=3, embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                    window_size=4, num_labels=10)
model = SwinForImageClassification(config).eval()
example_inputs = {"pixel_values": torch.randn(2, 3, 32, 32)}
