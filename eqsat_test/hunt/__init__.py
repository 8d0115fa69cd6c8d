"""Hunt mode's generator: random, valid programs over the ops the rules understand, each written out as a model file (class Model, get_inputs) and replayable from (generator version, seed)."""
from __future__ import annotations

# Bump when the same seed would give another program: a stored program names the version that made it.
GENERATOR_VERSION = "1"
