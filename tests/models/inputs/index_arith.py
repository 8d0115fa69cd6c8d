"""Integer arithmetic of the kind index computations do, on int64 offsets (negative ones too, so not
indices): a scale, a stride and a floor division. The "huge" input set puts values near 2**31, 2**53 and
2**62 in: past int32, past float64's exact integers, and where a doubling overflows int64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, i):
        return (i * 4 + 1) // 3, i.to(torch.float64) + 1.0


def get_inputs():
    return [torch.arange(-64, 64, dtype=torch.int64)]
