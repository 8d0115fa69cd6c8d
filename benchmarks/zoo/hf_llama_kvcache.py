"""Llama (Hugging Face) with its key/value cache on (use_cache=True): the cache object it returns."""
import torch

try:
    from transformers import LlamaConfig, LlamaForCausalLM
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=1, max_position_embeddings=64, use_cache=True)
model = LlamaForCausalLM(config).eval()
example_inputs = (torch.randint(0, 256, (1, 12)),)
