"""Model files to FX graphs to programs and back: load, capture, lift, lower, emit."""
