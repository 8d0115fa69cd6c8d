"""DistilBERT sequence classifier (Hugging Face): SequenceClassifierOutput."""
import torch

try:
    from transformers import DistilBertConfig, DistilBertForSequenceClassification
except ImportError as e:  # the zoo's libraries: pip install "eqsat-test[zoo]"
    raise ImportError(f"this zoo model needs transformers (pip install 'eqsat-test[zoo]'): {e}") from None

torch.manual_seed(0)

config = DistilBertConfig(vocab_size=256, dim=64, hidden_dim=128, n_layers=2, n_heads=4, max_position_embeddings=64,
                          num_labels=3)
model = DistilBertForSequenceClassification(config).eval()
ids = torch.randint(0, 256, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, 11:] = 0  # a padded second sequence
example_inputs = {"input_ids": ids, "attention_mask": mask}
