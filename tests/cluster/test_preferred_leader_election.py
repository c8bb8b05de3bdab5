"""Preferred leader election (auto.leader.rebalance.enable): Kafka's imbalance rule exactly, and
leadership returning to a restarted broker after the controller's periodic check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson

from rig.cluster.rebalance import imbalance_by_broker, partitions_to_move
from rig.cluster.zookeeper import PartitionState
from rig.scenario.load import load_scenario
from rig.simulate import simulate

Key = tuple[str, int]


def _cluster(partitions: int, moved: int, *, isr: tuple[int, ...] = (0, 1, 2)
             ) -> tuple[dict[Key, tuple[int, ...]], dict[Key, PartitionState]]:
    """`partitions` preferred for broker 0; the first `moved` of them led by broker 1."""
    assignments = {("t", p): (0, 1, 2) for p in range(partitions)}
    states = {key: PartitionState(1 if key[1] < moved else 0, 1, isr) for key in assignments}
    return assignments, states


def test_exactly_ten_percent_does_not_trigger() -> None:
    assignments, states = _cluster(30, 3)  # 3 / 30 = 10 %: Kafka needs strictly more
    assert imbalance_by_broker(assignments, {k: s.leader for k, s in states.items()})[0][1] == 30
    assert partitions_to_move(assignments, states, {0, 1, 2}, 10) == []


def test_more_than_ten_percent_moves_every_partition_of_that_broker() -> None:
    assignments, states = _cluster(30, 4)  # 4 / 30 > 10 %
    assert partitions_to_move(assignments, states, {0, 1, 2}, 10) == [("t", p) for p in range(4)]
    # The threshold is the setting, not a constant.
    assert partitions_to_move(assignments, states, {0, 1, 2}, 20) == []


def test_a_dead_preferred_replica_is_not_chosen() -> None:
    assignments, states = _cluster(10, 5)
    assert partitions_to_move(assignments, states, {1, 2}, 10) == []


def test_a_preferred_replica_out_of_the_isr_is_not_chosen() -> None:
    assignments, states = _cluster(10, 5, isr=(1, 2))
    assert partitions_to_move(assignments, states, {0, 1, 2}, 10) == []
    # Only the partitions whose ISR holds it move.
    states[("t", 0)] = PartitionState(1, 1, (1, 2, 0))
    assert partitions_to_move(assignments, states, {0, 1, 2}, 10) == [("t", 0)]


def test_offline_partitions_count_towards_the_imbalance() -> None:
    assignments = {("t", p): (0, 1) for p in range(4)}
    states = {("t", 0): PartitionState(-1, 1, (0,)),
              **{("t", p): PartitionState(0, 1, (0, 1)) for p in range(1, 4)}}
    assert partitions_to_move(assignments, states, {0, 1}, 10) == [("t", 0)]


SCENARIO = """
name: rebalance
seed: 3
duration: 40s
kafka: "2.4"
cluster:
  brokers: 3
  config:
    min.insync.replicas: 2
    replica.lag.time.max.ms: 10s
    zookeeper.session.timeout.ms: 6s
    leader.imbalance.check.interval.seconds: {interval}
    auto.leader.rebalance.enable: {enabled}
topics:
  - name: t
    partitions: 6
    replication_factor: 3
workload:
  producers:
    - topic: t
      rate: 200
      acks: all
faults:
  - kind: crash
    broker: 2
    at: 5s
    restart_after: 5s
"""


def _leaders(path: Path) -> tuple[list[dict], dict[int, int]]:
    preferred, last = [], {}
    for line in path.read_bytes().splitlines():
        event = orjson.loads(line)
        if event["event"] == "leader.elected":
            last[event["partition"]] = event["leader"]
            if event["election"] == "preferred":
                preferred.append(event)
    return preferred, last


def test_leadership_returns_to_the_restarted_broker(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    path = write_scenario(SCENARIO.format(interval=10, enabled="true"), "on.yaml")
    variant = load_scenario(path).variants[0]
    assert variant.config.leader_imbalance_check_interval_ms == 10_000  # a number is seconds
    simulate(variant, tmp_path / "on.jsonl")
    preferred, last = _leaders(tmp_path / "on.jsonl")
    assert preferred and {e["leader"] for e in preferred} == {2}
    # Checks run 5 s after the controller starts, then every 10 s; broker 2 restarts at 10 s.
    times = {e["t_ms"] for e in preferred}
    assert len(times) == 1 and times.pop() in {15_000.0, 25_000.0, 35_000.0}
    assert all(e["epoch"] >= 2 and 2 in e["isr"] for e in preferred)
    moved = {e["partition"] for e in preferred}
    assert all(last[p] == 2 for p in moved)


def test_no_preferred_election_when_disabled(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    path = write_scenario(SCENARIO.format(interval=10, enabled="false"), "off.yaml")
    simulate(load_scenario(path).variants[0], tmp_path / "off.jsonl")
    preferred, last = _leaders(tmp_path / "off.jsonl")
    assert preferred == [] and 2 not in last.values()
