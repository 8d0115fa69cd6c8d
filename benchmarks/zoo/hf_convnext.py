"""ConvNeXt (Hugging Face): depthwise 7x7 convolutions, channels-last LayerNorm, layer scale."""
import torch

try:
    from transformers import ConvNextConfig, ConvNextForImageClassification
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = ConvNextConfig(num_channels=3, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10)
model = ConvNextForImageClassification(config).eval()
example_inputs = {"pixel_values": torch.randn(2, 3, 32, 32)}
