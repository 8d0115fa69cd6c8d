"""Qwen2-MoE (Hugging Face): routed experts plus a gated shared expert."""
import torch

try:
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = Qwen2MoeConfig(vocab_size=256, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                        shared_expert_intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, max_position_embeddings=64,
                        use_cache=False)
model = Qwen2MoeForCausalLM(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask}
