"""BART encoder-decoder (Hugging Face): learned positions, cross-attention, Seq2SeqLMOutput."""
import torch

try:
    from transformers import BartConfig, BartForConditionalGeneration
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = BartConfig(vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                    decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
                    use_cache=False)
model = BartForConditionalGeneration(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": torch.randint(3, 256, (2, 8))}
