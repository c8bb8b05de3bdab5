"""Strategies: the pluggable parts of the model, one package per kind, found through the registry."""
