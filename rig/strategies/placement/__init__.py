"""Replica placement: which brokers hold each partition, and which one is the preferred leader."""

from rig.strategies.placement.base import (
    PlacementError,
    PlacementStrategy,
    check_assignment,
    check_leaders,
)

__all__ = ["PlacementError", "PlacementStrategy", "check_assignment", "check_leaders"]
