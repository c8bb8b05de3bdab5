"""Replica placement: which brokers hold each partition, and which one is the preferred leader."""

from rig.strategies.placement.base import (
    API_VERSION,
    PlacementError,
    PlacementStrategy,
    check_assignment,
    check_leaders,
)

__all__ = ["API_VERSION", "PlacementError", "PlacementStrategy", "check_assignment",
           "check_leaders"]
