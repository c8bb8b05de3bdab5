"""Explicit placement: every topic lists its replicas in the scenario, as `kafka-topics
--replica-assignment` does."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.placement.base import PlacementError


class ExplicitPlacement:
    """Takes each topic's `assignment` as written; a topic without one is an error."""

    name: ClassVar[str] = "explicit"
    description: ClassVar[str] = "The replica lists written in each topic's `assignment`"
    api_version: ClassVar[int] = 1

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        if topic.assignment is None:
            raise PlacementError(f"topic {topic.name!r} has no assignment, which the explicit "
                                 "placement needs")
        return [tuple(replicas) for replicas in topic.assignment]
