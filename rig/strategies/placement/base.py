"""The placement Protocol and the checks every assignment must pass, whoever computed it."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar, Protocol, runtime_checkable

from rig.scenario.model import BrokerSpec, TopicSpec


class PlacementError(ValueError):
    """A placement request Kafka would refuse (the message is Kafka's reason).

    Raising it is part of the contract: the run stops with exit 2 and this message, as a
    scenario mistake (too few brokers, every broker fenced), not as a plugin failure.
    """


@runtime_checkable
class PlacementStrategy(Protocol):
    """Computes a topic's replica assignment (Protocol version 1).

    The model creates one instance per variant (with the scenario's `options` as keyword
    arguments) and calls `assign` once per topic without an explicit `assignment`, in the
    scenario's topic order, always with the same `rng` stream (`placement`). An instance may
    remember earlier topics (to balance load across them, say).

    Contract of `assign(brokers, topic, rng)`:
      - returns one replica list per partition (index = partition id), each of length
        `topic.replication_factor`, naming only ids of `brokers` (ints), never one broker twice;
      - the first replica is the preferred leader, and is never a broker with `fenced` set
        (a fenced broker may hold a follower replica);
      - all randomness comes from `rng`: the same brokers, topics and seed give the same result,
        whatever PYTHONHASHSEED (do not iterate over sets of strings) and the global `random`;
      - a request Kafka would refuse raises PlacementError with Kafka's reason;
      - `brokers` and `topic` are read-only.
    `rig.testing.check_placement(cls)` checks all of this on standard clusters.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    api_version: ClassVar[int]

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
        not_ints = [r for r in replicas if type(r) is not int]
        if not_ints:
            problems.append(f"partition {partition} names brokers that are not ints: "
                            f"{not_ints!r}")
            continue
        if len(set(replicas)) != len(replicas):
            problems.append(f"partition {partition} lists a broker twice: {list(replicas)}")
        unknown = sorted(set(replicas) - ids)
        if unknown:
            problems.append(f"partition {partition} names unknown brokers {unknown}")
    return problems


def check_leaders(assignment: Sequence[Sequence[int]], brokers: Sequence[BrokerSpec]) -> list[str]:
    """Partitions whose preferred leader is a fenced broker (a placement strategy never does
    that; an explicit assignment may, as Kafka allows)."""
    fenced = {b.id for b in brokers if b.fenced}
    if not fenced:
        return []
    return [f"partition {partition} has fenced broker {replicas[0]} as its leader"
            for partition, replicas in enumerate(assignment) if replicas and replicas[0] in fenced]
