"""Equality saturation: the term language, rule DSL and compiler, saturation, extraction, generation."""
