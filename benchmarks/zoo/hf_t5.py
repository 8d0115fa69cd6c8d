"""T5 encoder-decoder (Hugging Face): relative position buckets, decoder_input_ids, Seq2SeqLMOutput."""
import torch

try:
    from transformers import T5Config, T5ForConditionalGeneration
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = T5Config(vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
                  relative_attention_num_buckets=8, use_cache=False)
model = T5ForConditionalGeneration(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": torch.randint(0, 256, (2, 8))}
