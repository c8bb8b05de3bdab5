"""Replication strategies: how a replica that becomes follower decides where its log is valid."""

from rig.strategies.replication.base import AskLeader, ReplicationStrategy, TruncateTo

__all__ = ["AskLeader", "ReplicationStrategy", "TruncateTo"]
