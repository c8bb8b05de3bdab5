"""Kafka's own liveness defects a run met, from the events the model logs where it reproduces
them (docs/kafka.md §10, §11). A run one of them leaves unsettled behaves as that Kafka release
does; `rig fuzz` says so beside the run instead of leaving it to look like a defect of rig's.

- KAFKA-1120 (fixed in 2.2 by KIP-380's broker epochs): `controller.bounce_unseen`, a broker
  that went and registered again between two reads of /brokers/ids, unseen by the controller;
- KAFKA-10706 (fixed in 2.7): `replica.truncation_stuck`, a follower's epoch walk-back that asks
  the leader the same question for ever.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rig.events import names

DEFECTS: dict[str, str] = {
    names.CONTROLLER_BOUNCE_UNSEEN: "KAFKA-1120",
    names.REPLICA_TRUNCATION_STUCK: "KAFKA-10706",
}


class KafkaDefects:
    """An observer of the event log: which of DEFECTS the run met, each once, in order met."""

    events = frozenset(DEFECTS)

    def __init__(self) -> None:
        self.met: dict[str, None] = {}

    def observe(self, event: Mapping[str, Any]) -> None:
        self.met[DEFECTS[event["event"]]] = None


__all__ = ["DEFECTS", "KafkaDefects"]
