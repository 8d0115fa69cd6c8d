"""GNN message passing (GCN-style sum aggregation): gather source-node features per edge, linear transform, scatter_add into destination nodes, degree-normalize; 65536 nodes, 524288 edges, 64 features."""
import torch
import torch.nn as nn

num_nodes = 65536
num_edges = 524288
features = 64


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.lin = nn.Linear(features, features)

    def forward(self, x, src, dst):
        msg = self.lin(x)[src]
        out = torch.zeros_like(x).scatter_add(0, dst.unsqueeze(-1).expand(-1, x.shape[1]), msg)
        deg = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device).scatter_add(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return torch.relu(out / deg.clamp(min=1.0).unsqueeze(-1) + x)


def get_inputs():
    return [
        torch.randn(num_nodes, features),
        torch.randint(0, num_nodes, (num_edges,)),
        torch.randint(0, num_nodes, (num_edges,)),
    ]


def get_init_inputs():
    return [features]
