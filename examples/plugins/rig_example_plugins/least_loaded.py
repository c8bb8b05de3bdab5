"""Least-loaded placement: every replica goes to the broker holding the fewest, racks spread.

Load is counted over every topic the instance placed (rig creates one instance per variant), so a
topic created later fills the brokers earlier topics left light. Leaders are balanced on their
own count and never put on a fenced broker; fenced brokers take followers only when nothing else
fits. Ties are broken by a random rank drawn from `rng` once per topic, so equal brokers take
turns and the same seed gives the same assignment.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.placement import PlacementError


class LeastLoadedPlacement:
    """Each leader on the unfenced broker leading the fewest partitions; each follower on the
    least-loaded broker of a rack the partition does not use yet."""

    name: ClassVar[str] = "least-loaded"
    description: ClassVar[str] = ("Example plugin: each replica on the least-loaded broker, "
                                  "spread over racks; leaders balanced, never fenced")
    api_version: ClassVar[int] = 1

    def __init__(self) -> None:
        self.replicas: dict[int, int] = {}  # broker → replicas placed, over all topics
        self.leaders: dict[int, int] = {}  # broker → preferred leaderships, over all topics

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        rf = topic.replication_factor
        # Refuse what Kafka's KRaft controller refuses, with its words.
        if rf <= 0:
            raise PlacementError(f"Invalid replication factor {rf}: the replication factor "
                                 "must be positive.")
        if not any(not b.fenced for b in brokers):
            raise PlacementError("All brokers are currently fenced.")
        if rf > len(brokers):
            raise PlacementError(f"The target replication factor of {rf} cannot be reached "
                                 f"because only {len(brokers)} broker(s) are registered.")
        rank = {b.id: i for i, b in enumerate(rng.sample(list(brokers), len(brokers)))}
        rack = {b.id: b.rack for b in brokers}
        fenced = {b.id for b in brokers if b.fenced}
        ids = [b.id for b in brokers]
        result = []
        for _ in range(topic.partitions):
            leader = min((b for b in ids if b not in fenced),
                         key=lambda b: (self.leaders.get(b, 0), self.replicas.get(b, 0), rank[b]))
            chosen = [leader]
            racks_used = {rack[leader]}
            while len(chosen) < rf:
                follower = min((b for b in ids if b not in chosen),
                               key=lambda b: (b in fenced, rack[b] in racks_used,
                                              self.replicas.get(b, 0), rank[b]))
                chosen.append(follower)
                racks_used.add(rack[follower])
            self.leaders[leader] = self.leaders.get(leader, 0) + 1
            for b in chosen:
                self.replicas[b] = self.replicas.get(b, 0) + 1
            result.append(tuple(chosen))
        return result
