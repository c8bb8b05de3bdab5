"""The cluster the planted-ELR tests run (KRaft 4.1, ELR on, RF 3, min ISR 2, acks=all), the
network cut that isolates one broker (and so fences it), and the planted ELR that forgets to clear
(tests/checks/test_planted_elr_bug.py, tests/search/test_fuzz_kraft_planted_bug.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rig.cluster.kraft.partition_change_builder import PartitionRegistration, change

CUT = {0: [[0], [1, 2, "controller"]], 1: [[1], [0, 2, "controller"]],
       2: [[2], [0, 1, "controller"]]}


def cut(broker: int, at: str, heal: str | None = None) -> dict[str, Any]:
    """Broker `broker` cut off from the others and the controller at `at` (until `heal`)."""
    fault: dict[str, Any] = {"kind": "network-partition", "groups": CUT[broker], "at": at}
    if heal:
        fault["heal_after"] = heal
    return fault


def elr_scenario(name: str, faults: list[dict[str, Any]], duration: str = "80s",
                 ) -> dict[str, Any]:
    return {
        "name": name, "seed": 3, "duration": duration, "kafka": "4.1", "quiesce": "60s",
        "cluster": {"brokers": 3, "config": {"min.insync.replicas": 2}},
        "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                    "assignment": [[0, 1, 2]]}],
        "workload": {"producers": [{"topic": "t", "rate": 200, "acks": "all",
                                    "keys": {"uniform": 50}, "linger": "20ms"}]},
        "faults": faults,
    }


def forgetful_change(part: PartitionRegistration, request: Any, **rules: Any,
                     ) -> PartitionRegistration | None:
    """Planted bug for rig.cluster.kraft.replication_control.change: Kafka clears the ELR once
    the ISR is back at min ISR (PartitionChangeBuilder.maybePopulateTargetElr); this keeps it."""
    new = change(part, request, **rules)
    if new is not None and part.elr and not new.elr and new.isr:
        return replace(new, elr=part.elr)  # the bug: the ELR outlives the ISR's recovery
    return new
