"""ViT image classifier (Hugging Face): patch embedding by convolution, pixel_values keyword, ImageClassifierOutput."""
import torch

try:
    from transformers import ViTConfig, ViTForImageClassification
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=64, intermediate_size=128,
                   num_hidden_layers=2, num_attention_heads=4, num_labels=10)
model = ViTForImageClassification(config).eval()
example_inputs = {"pixel_values": torch.randn(2, 3, 32, 32)}
