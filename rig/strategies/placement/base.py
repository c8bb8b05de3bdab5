"""The placement Protocol and the checks every assignment must pass, whoever computed it."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar, Protocol, runtime_checkable

from rig.scenario.model import BrokerSpec, TopicSpec


class PlacementError(ValueError):
    """A placement request Kafka would refuse (the message is Kafka's reason)."""


@runtime_checkable
class PlacementStrategy(Protocol):
    """Computes a topic's replica assignment.

    Contract: `assign` returns one replica list per partition (index = partition id), each of
    length `topic.replication_factor`, naming only brokers in `brokers`, never one broker twice;
    the first replica is the preferred leader. All randomness comes from `rng`.
    """

    name: ClassVar[str]
    description: ClassVar[str]

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]: ...


def check_assignment(assignment: Sequence[Sequence[int]], brokers: Sequence[BrokerSpec],
                     topic: TopicSpec) -> list[str]:
    """Everything wrong with `assignment` for `topic` (empty when it is valid)."""
    ids = {b.id for b in brokers}
    problems = []
    if len(assignment) != topic.partitions:
        problems.append(f"{len(assignment)} replica lists for {topic.partitions} partitions")
    for partition, replicas in enumerate(assignment):
        if len(replicas) != topic.replication_factor:
            problems.append(f"partition {partition} has {len(replicas)} replicas, "
                            f"expected {topic.replication_factor}")
        if len(set(replicas)) != len(replicas):
            problems.append(f"partition {partition} lists a broker twice: {list(replicas)}")
        unknown = sorted(set(replicas) - ids)
        if unknown:
            problems.append(f"partition {partition} names unknown brokers {unknown}")
    return problems
