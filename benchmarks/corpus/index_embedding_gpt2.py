"""GPT-2 input embeddings: token embedding (50257 x 768) + learned position embedding (1024 x 768) lookup, summed; batch 8, seq 1024."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
vocab_size = 50257
max_positions = 1024
d_model = 768


class Model(nn.Module):
    def __init__(self, vocab_size, max_positions, d_model):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_positions, d_model)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        return self.wte(input_ids) + self.wpe(pos)[None]


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, max_positions, d_model]
