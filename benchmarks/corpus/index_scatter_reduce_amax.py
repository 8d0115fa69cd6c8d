"""Point-cloud voxel max-pooling: scatter_reduce(amax, include_self=False) of per-point features into voxel slots, plus scatter_reduce mean; 262144 points, 64 features, 32768 voxels."""
import torch
import torch.nn as nn

num_points = 262144
features = 64
num_voxels = 32768


class Model(nn.Module):
    def __init__(self, num_voxels):
        super().__init__()
        self.num_voxels = num_voxels

    def forward(self, feats, voxel_idx):
        idx = voxel_idx.unsqueeze(-1).expand(-1, feats.shape[1])
        base = torch.zeros(self.num_voxels, feats.shape[1], dtype=feats.dtype, device=feats.device)
        vmax = base.scatter_reduce(0, idx, feats, reduce="amax", include_self=False)
        vmean = base.scatter_reduce(0, idx, feats, reduce="mean", include_self=False)
        return vmax, vmean


def get_inputs():
    return [torch.randn(num_points, features), torch.randint(0, num_voxels, (num_points,))]


def get_init_inputs():
    return [num_voxels]
