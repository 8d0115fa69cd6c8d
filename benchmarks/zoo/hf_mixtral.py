"""Mixtral (Hugging Face): a sparse mixture of experts (4 experts, top 2) behind the attention."""
import torch

try:
    from transformers import MixtralConfig, MixtralForCausalLM
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = MixtralConfig(vocab_size=256, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, max_position_embeddings=64, num_local_experts=4, num_experts_per_tok=2,
                       use_cache=False)
model = MixtralForCausalLM(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask}
