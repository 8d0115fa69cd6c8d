"""torch.gather along the vocab dim: log-probabilities of chosen tokens (RLHF / sequence scoring), summed with a padding mask; batch 8, seq 512, vocab 8192."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 512
vocab_size = 8192


class Model(nn.Module):
    def forward(self, logits, tokens, mask):
        logp = torch.log_softmax(logits, dim=-1)
        token_logp = torch.gather(logp, dim=-1, index=tokens.unsqueeze(-1)).squeeze(-1)
        return token_logp, (token_logp * mask).sum(dim=-1)


def get_inputs():
    return [
        torch.randn(batch_size, seq_len, vocab_size),
        torch.randint(0, vocab_size, (batch_size, seq_len)),
        (torch.rand(batch_size, seq_len) > 0.1).float(),
    ]


def get_init_inputs():
    return []
