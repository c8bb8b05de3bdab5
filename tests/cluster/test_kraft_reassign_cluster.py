"""A KRaft reassignment in a whole simulated cluster (KIP-455; TopicDelta.localChanges and
ReplicaManager.applyDelta on the brokers): the added broker creates the replica and copies the
log from offset 0, the leader's AlterPartition completes the move, the removed leader is
answered NEW_LEADER_ELECTED and deletes its replica; a broker down meanwhile catches up on the
metadata when it returns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.errors import ScenarioError
from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named, reassign_scenario


def run(write: Callable[[str, str], Path], tmp_path: Path, target: str, more: str = "",
        kafka: str = "4.1") -> tuple[list[dict[str, Any]], Any]:
    scenario = load_scenario(write(reassign_scenario(kafka=kafka, target=target, more=more),
                                   "s.yaml"))
    [variant] = scenario.variants
    return checked_run(variant, tmp_path, scenario.name)


def test_moving_the_leader_off_answers_108_and_deletes_its_replica(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events, _ = run(write_scenario, tmp_path, "[1, 2, 3]")
    changes = named(events, names.PARTITION_CHANGE)
    assert [(c["replicas"], c["adding"], c["removing"], c["leader"], c["leader_epoch"])
            for c in changes] == [([1, 2, 3, 0], [3], [0], 0, 0), ([1, 2, 3], [], [], 1, 1)]
    [created] = named(events, names.REPLICA_CREATED)
    assert created["broker"] == 3 and created["t_ms"] > 5000
    follow = next(e for e in events if e["event"] == names.REPLICA_BECOME_FOLLOWER
                  and e["broker"] == 3)
    assert (follow["leader"], follow["leo"]) == (0, 0)  # an empty log, fetching from 0
    [rejected] = named(events, names.ALTER_PARTITION_REJECTED)
    assert (rejected["broker"], rejected["error_code"], rejected["isr"]) == (0, 108, [0, 1, 2, 3])
    [deleted] = named(events, names.REPLICA_DELETED)
    assert deleted["broker"] == 0 and deleted["t_ms"] >= changes[1]["t_ms"]
    [elected] = named(events, names.LEADER_ELECTED)
    assert (elected["leader"], elected["previous"], elected["reason"]) == (1, 0, "reassignment")
    # the new replica caught up: broker 3 became a follower of 1 with the whole log
    last = [e for e in events if e["event"] == names.REPLICA_BECOME_FOLLOWER
            and e["broker"] == 3][-1]
    assert last["leader"] == 1 and last["leo"] == deleted["log_end_offset"]


def test_an_added_broker_that_is_down_catches_up_when_it_returns(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # Broker 3 is down when the reassignment starts: nothing completes until it is back, has
    # the metadata, creates the replica and joins the ISR.
    events, _ = run(write_scenario, tmp_path, "[1, 2, 3]",
                    "  - {kind: crash, broker: 3, at: 4s, restart_after: 8s}")
    [created] = named(events, names.REPLICA_CREATED)
    restarted = next(e for e in events if e["event"] == names.BROKER_RESTART)
    assert created["broker"] == 3 and created["t_ms"] >= restarted["t_ms"] >= 12_000
    done = [c for c in named(events, names.PARTITION_CHANGE) if c["replicas"] == [1, 2, 3]]
    assert done and done[0]["t_ms"] > created["t_ms"] and done[0]["leader"] == 1


def test_a_removed_follower_that_was_down_deletes_its_stray_replica_when_back(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # Follower 2 leaves the set while it is down; the leader stays (no 108), the replica set
    # loses a member (the leader epoch moves), and 2 deletes its log once it is back.
    events, _ = run(write_scenario, tmp_path, "[0, 1, 3]",
                    "  - {kind: crash, broker: 2, at: 3s, restart_after: 15s}")
    done = [c for c in named(events, names.PARTITION_CHANGE) if c["replicas"] == [0, 1, 3]]
    assert done and done[0]["leader"] == 0
    assert all(e["error_code"] != 108 for e in named(events, names.ALTER_PARTITION_REJECTED))
    [deleted] = named(events, names.REPLICA_DELETED)
    restarted = next(e for e in events if e["event"] == names.BROKER_RESTART)
    assert deleted["broker"] == 2 and deleted["t_ms"] >= restarted["t_ms"]


def test_zookeeper_mode_before_2_4_refuses_a_reassign_fault(
        write_scenario: Callable[[str, str], Path]) -> None:
    with pytest.raises(ScenarioError, match=r"faults\[0\]\.kind: reassign is modelled from "
                       r"Kafka 2\.4 \(AlterPartitionReassignments, KIP-455\), but this variant "
                       r"runs kafka 2\.3"):
        load_scenario(write_scenario(reassign_scenario(kafka="2.3", target="[1, 2, 3]"),
                                     "s.yaml"))
