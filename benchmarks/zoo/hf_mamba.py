"""Mamba (Hugging Face): selective state-space layers (the slow path's sequential scan, no CUDA kernels)."""
import torch

try:
    from transformers import MambaConfig, MambaForCausalLM
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = MambaConfig(vocab_size=256, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2, conv_kernel=4,
                     use_cache=False)
model = MambaForCausalLM(config).eval()
example_inputs = {"input_ids": torch.randint(0, 256, (2, 12))}
