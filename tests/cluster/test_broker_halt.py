"""The halt in the whole model: a follower of a topic with unclean election off finds the leader's
log end below its own; its broker stops at once (broker.halt, then broker.crash) and the
controller, once the broker's ZooKeeper session expires, takes it out of the ISR
(ReplicaFetcherThread.handleOffsetOutOfRange, Runtime.halt; docs/kafka.md §11)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from rig.cluster.cluster import Cluster
from rig.protocol.records import Batch
from rig.scenario.load import load_scenario
from tests.cluster.test_cluster_start import start_cluster

SCENARIO = """
name: halt
seed: 7
duration: 20s
kafka: "0.8.2"
cluster:
  brokers: 3
topics:
  - {name: t, partitions: 1, replication_factor: 3, assignment: [[0, 1, 2]],
     config: {unclean.leader.election.enable: UNCLEAN}}
variants:
  v: {}
"""
KEY = ("t", 0)


def started(tmp_path: Path, unclean: bool) -> tuple[Cluster, io.BytesIO]:
    path = tmp_path / "halt.yaml"
    path.write_text(SCENARIO.replace("UNCLEAN", str(unclean).lower()))
    return start_cluster(load_scenario(path).variant("v"), "halt")


def all_events(sink: io.BytesIO) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in sink.getvalue().splitlines()]


def _follower_ahead(cluster: Cluster) -> None:
    """Broker 1 holds three records the leader never had (what an unclean history leaves)."""
    cluster.sim.run(1_000_000)
    replica = cluster.brokers[1].replicas[KEY]
    for offset in range(3):
        replica.log.append(Batch(offset, 1, 0, 40, 9, offset), 1000.0)
    [fetcher] = [f for f in cluster.brokers[1].fetchers.values() if KEY in f.partitions]
    fetcher._fetch_from_end(KEY, replica)  # its next fetch asks from 3: out of range
    cluster.sim.run(2_000_000)  # the answer, then the ListOffsets round trip


def test_with_unclean_election_off_the_broker_halts_and_leaves_the_isr(tmp_path: Path) -> None:
    cluster, sink = started(tmp_path, unclean=False)
    _follower_ahead(cluster)
    assert not cluster.brokers[1].alive
    assert cluster.brokers[1].replicas[KEY].leo == 3  # nothing truncated
    events = all_events(sink)
    halt = next(i for i, e in enumerate(events) if e["event"] == "broker.halt")
    assert {k: events[halt][k] for k in ("broker", "leader", "leader_log_end_offset",
                                         "log_end_offset")} == {
        "broker": 1, "leader": 0, "leader_log_end_offset": 0, "log_end_offset": 3}
    assert events[halt + 1]["event"] == "broker.crash" and events[halt + 1]["broker"] == 1
    cluster.sim.run(10_000_000)  # the ZooKeeper session (6 s) expires; the controller acts
    assert 1 not in cluster.zk.partitions[KEY].isr and cluster.zk.partitions[KEY].leader == 0


def test_with_unclean_election_on_it_truncates_to_the_leaders_end(tmp_path: Path) -> None:
    cluster, sink = started(tmp_path, unclean=True)
    _follower_ahead(cluster)
    assert cluster.brokers[1].alive and cluster.brokers[1].replicas[KEY].leo == 0
    assert not [e for e in all_events(sink) if e["event"] == "broker.halt"]
