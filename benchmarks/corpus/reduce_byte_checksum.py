"""Per-row byte checksums of uint8 packets: a mod-256 sum (sum in uint8) and the smallest and largest byte of each row; 512 packets x 1500 bytes."""
import torch
import torch.nn as nn

num_packets = 512
packet_bytes = 1500
byte_range = 256


class Model(nn.Module):
    def forward(self, packets):
        checksum = torch.sum(packets, dim=-1, dtype=torch.uint8)
        lo = torch.amin(packets, dim=-1)
        hi = torch.amax(packets, dim=-1)
        return checksum, lo, hi


def get_inputs():
    return [torch.randint(0, byte_range, (num_packets, packet_bytes), dtype=torch.uint8)]


def get_init_inputs():
    return []
