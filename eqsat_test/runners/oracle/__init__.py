"""The oracle: numerics (tolerances, output walkers), input sets, and the per-element judge."""
