"""ALBERT (Hugging Face): factorized embeddings, one layer's weights shared across layers."""
import torch

try:
    from transformers import AlbertConfig, AlbertModel
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = AlbertConfig(vocab_size=256, embedding_size=32, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                      num_attention_heads=4, max_position_embeddings=64)
model = AlbertModel(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask}
