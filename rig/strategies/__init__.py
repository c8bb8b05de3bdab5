"""Strategies: the pluggable parts of the model, one package per kind, found by the registry."""
