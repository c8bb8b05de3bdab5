"""A follower's fetcher threads, one per (leader, fetcher slot) (Kafka's
ReplicaFetcherManager: addFetcherForPartitions, removeFetcherForPartitions)."""

from __future__ import annotations

from typing import Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica
from rig.strategies.replication.base import Decision


class FetcherManager:
    def __init__(self, broker: Process, ctx: NodeContext):
        self.broker = broker
        self.ctx = ctx
        self.fetchers: dict[tuple[int, int], Any] = {}  # (leader, slot) → ReplicaFetcher

    def reset(self) -> None:
        """The process died: its fetcher threads with it."""
        for fetcher in self.fetchers.values():
            fetcher.stop()
        self.fetchers.clear()

    def follow(self, key: TopicPartition, leader: int, slot: int, decision: Decision,
               to_wake: dict[Any, None] | None) -> None:
        """Fetch `key` from `leader` with the fetcher of `slot` (started if none runs); with
        `to_wake`, the caller wakes the fetcher once it added all its partitions."""
        fetcher = self.fetchers.get((leader, slot))
        if fetcher is None or fetcher.stopped:
            fetcher = self.fetchers[(leader, slot)] = self.ctx.new_fetcher(self.broker, leader,
                                                                           slot)
        fetcher.add_partition(key, decision, wake=to_wake is None)
        if to_wake is not None:
            to_wake[fetcher] = None

    def stop_fetching(self, replica: Replica) -> None:
        slot = (replica.leader, replica.fetcher_slot)
        fetcher = self.fetchers.get(slot)
        if fetcher is not None:
            fetcher.remove_partition(replica.key)
            if fetcher.idle:
                fetcher.stop()
                del self.fetchers[slot]
