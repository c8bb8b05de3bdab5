"""ISR strategies: when a follower leaves and rejoins the in-sync replica set."""

from rig.strategies.isr.base import NEVER_CAUGHT_UP, FollowerProgress, IsrStrategy

__all__ = ["NEVER_CAUGHT_UP", "FollowerProgress", "IsrStrategy"]
