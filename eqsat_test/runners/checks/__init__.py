"""Checks beyond one eager-vs-compiled run: dtype/size sweeps, devices, Inductor configs, performance."""
