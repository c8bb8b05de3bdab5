"""ISR strategies: when a follower leaves and rejoins the in-sync replica set."""

from rig.strategies.isr.base import FollowerProgress, IsrStrategy

__all__ = ["FollowerProgress", "IsrStrategy"]
