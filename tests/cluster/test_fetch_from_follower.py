"""Fetch from follower (KIP-392): Kafka's selection rule branch by branch
(RackAwareReplicaSelector with ReplicaManager.findPreferredReadReplica), and a run where the
preferred read replica crashes and its consumer falls back to the leader, never reading above
the high watermark."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.cluster.log import Log
from rig.cluster.read_replica import find_preferred_read_replica, serves_consumer
from rig.cluster.replica import Replica, Role
from rig.cluster.replica_manager import ReplicaManager
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig.strategies.isr import FollowerProgress
from rig.workload.consumer import ConsumerFetcher

RACKS = {0: "a", 1: "b", 2: "c", 3: "c"}


def _leader(leo: int = 100, isr: tuple[int, ...] = (0, 1, 2, 3),
            followers: dict[int, tuple[int, float]] | None = None) -> Replica:
    """Broker 0 leads a partition with replicas 0–3; followers: broker → (LEO, caught up at)."""
    replica = Replica(("t", 0), 0, (0, 1, 2, 3), Log(), 0, role=Role.LEADER, leader=0, isr=isr)
    replica.log.log_end_offset = leo
    for broker, (follower_leo, caught_up) in (followers or {
            1: (100, 1000.0), 2: (100, 1000.0), 3: (100, 1000.0)}).items():
        replica.followers[broker] = FollowerProgress(follower_leo, caught_up, caught_up, leo)
    return replica


def _choose(replica: Replica, rack: str, offset: int = 90) -> int | None:
    return find_preferred_read_replica(replica, rack, offset, 1000.0, RACKS.get)


def test_same_rack_leader_is_kept() -> None:
    assert _choose(_leader(), "a") is None  # the leader: nothing is sent


def test_the_most_caught_up_same_rack_follower_is_chosen() -> None:
    replica = _leader(followers={1: (100, 1000.0), 2: (95, 1000.0), 3: (99, 1000.0)})
    assert _choose(replica, "c") == 3  # larger LEO wins
    replica = _leader(followers={1: (100, 1000.0), 2: (99, 400.0), 3: (99, 900.0)})
    assert _choose(replica, "c") == 3  # same LEO: caught up more recently wins
    assert _choose(replica, "b") == 1


def test_no_same_rack_replica_means_the_leader() -> None:
    assert _choose(_leader(), "d") is None
    assert _choose(_leader(), "") is None  # no client.rack


def test_a_replica_out_of_the_isr_is_not_chosen() -> None:
    replica = _leader(isr=(0, 1, 2), followers={1: (100, 1000.0), 2: (95, 1000.0),
                                                 3: (100, 1000.0)})
    assert _choose(replica, "c") == 2  # 3 is more caught up but outside the ISR
    replica = _leader(isr=(0, 1))
    assert _choose(replica, "c") is None


def test_a_replica_without_the_fetch_offset_is_not_chosen() -> None:
    replica = _leader(followers={1: (100, 1000.0), 2: (80, 1000.0), 3: (89, 1000.0)})
    assert _choose(replica, "c", offset=89) == 3
    assert _choose(replica, "c", offset=90) is None  # beyond both c replicas' LEOs
    replica.log.log_start_offset = 95
    assert _choose(_leader(), "c", offset=95) in (2, 3)
    assert _choose(replica, "c", offset=90) is None  # below the log start


def test_only_leaders_redirect_and_followers_serve_only_v11_consumers() -> None:
    follower = _leader()
    follower.role = Role.FOLLOWER
    assert _choose(follower, "c") is None
    assert serves_consumer(follower, 11, "c") and not serves_consumer(follower, 10, "c")
    assert not serves_consumer(follower, 11, "")
    assert serves_consumer(_leader(), 4, "") and not serves_consumer(None, 17, "c")


SCENARIO = """
name: fff-crash
seed: 3
duration: 40s
kafka: "2.4"
cluster:
  brokers:
    - {id: 0, rack: a}
    - {id: 1, rack: b}
    - {id: 2, rack: c}
  config:
    min.insync.replicas: 2
    replica.lag.time.max.ms: 10s
    zookeeper.session.timeout.ms: 6s
    replica.selector.class: rack-aware
network:
  latency: 100us
  cross_rack: {latency: 1ms}
topics:
  - name: t
    partitions: 6
    replication_factor: 3
workload:
  producers:
    - {name: p, topic: t, rate: 200, acks: all, rack: a}
  consumers:
    - {group: g, topic: t, members: 3, rack: [a, b, c], start: earliest}
faults:
  - {kind: crash, broker: 2, at: 10s, restart_after: 15s}
"""


def test_consumer_falls_back_to_the_leader_when_its_read_replica_crashes(
        write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The highest HW any leader reached so far, per partition: no read may pass it.
    committed: dict[Any, int] = {}
    advance = ReplicaManager.maybe_advance_hw

    def tracked(self: ReplicaManager, replica: Replica, followers_told: bool = False) -> None:
        advance(self, replica, followers_told)
        committed[replica.key] = max(committed.get(replica.key, 0), replica.high_watermark)

    above: list[tuple[Any, int, int]] = []
    apply = ConsumerFetcher._apply

    def checked(self: ConsumerFetcher, response: Any) -> None:
        for key, (batches, _) in response.records.items():
            for batch in batches:
                if batch.end_offset > committed.get(key, 0):
                    above.append((key, batch.end_offset, committed.get(key, 0)))
        apply(self, response)

    monkeypatch.setattr(ReplicaManager, "maybe_advance_hw", tracked)
    monkeypatch.setattr(ConsumerFetcher, "_apply", checked)
    variant = load_scenario(write_scenario(SCENARIO, "fff.yaml")).variants[0]
    simulate(variant, tmp_path / "fff.jsonl")
    assert above == []
    reads: dict[tuple[str, int, str], int] = {}
    for line in (tmp_path / "fff.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event["event"] == "consumer.read":
            when = ("before" if event["t_ms"] < 10_000 else
                    "down" if event["t_ms"] < 25_000 else "back")
            key = (event["client"], event["broker"], when)
            reads[key] = reads.get(key, 0) + sum(b[1] - b[0] for b in event["batches"])
    # Before the crash each member reads only in its own rack (from leaders and followers).
    assert {(c, b) for c, b, w in reads if w == "before"} == {
        ("consumer-g-0", 0), ("consumer-g-1", 1), ("consumer-g-2", 2)}
    # While broker 2 is down, its member reads from the leaders; after its restart, from it.
    assert reads.get(("consumer-g-2", 0, "down"), 0) + reads.get(("consumer-g-2", 1, "down"),
                                                                   0) > 100
    assert reads.get(("consumer-g-2", 2, "back"), 0) > 100
