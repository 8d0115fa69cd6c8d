"""Rapidity of particles from kinetic energy and mass: gamma = 1 + T/m, rapidity = acosh(gamma), energies 1 GeV-1 PeV and masses from neutrino-like to proton-like; 64 x 4096 particles."""
import torch
import torch.nn as nn

batch_size = 64
num_particles = 4096
log10_energy_span = 6
log10_mass_span = 12


class Model(nn.Module):
    def forward(self, kinetic_energy, mass):
        gamma = 1.0 + kinetic_energy / mass
        return torch.acosh(gamma)


def get_inputs():
    energy = 10.0 ** (torch.rand(batch_size, num_particles) * log10_energy_span)
    mass = 10.0 ** (-torch.rand(batch_size, num_particles) * log10_mass_span)
    return [energy, mass]


def get_init_inputs():
    return []
