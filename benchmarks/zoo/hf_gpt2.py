"""GPT-2 language model (Hugging Face): causal attention with a padding mask, CausalLMOutputWithCrossAttentions."""
import torch

try:
    from transformers import GPT2Config, GPT2LMHeadModel
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=64, use_cache=False)
model = GPT2LMHeadModel(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask}
