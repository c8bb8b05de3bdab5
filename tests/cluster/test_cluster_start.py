"""Starting a cluster that is already up: the start-up LeaderAndIsr and UpdateMetadata are
quiet, wake each fetcher once, and leave every broker holding the same metadata maps until it
is told something new."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from rig.cluster.cluster import Cluster
from rig.engine import Simulation, Streams
from rig.events import EventLog
from rig.scenario.load import load_scenario
from rig.scenario.model import VariantSpec
from rig.strategies import registry
from rig.strategies.guard import RunContext, guard_all

SCENARIO = """
name: start
seed: 7
duration: 1s
cluster:
  brokers: [{id: 0}, {id: 1}, {id: 2}]
  config: {num.replica.fetchers: 2}
topics:
  - {name: a, partitions: 30, replication_factor: 3}
  - {name: b, partitions: 12, replication_factor: 2}
variants:
  v7: {kafka: "1.1"}
"""


def started(tmp_path: Path) -> tuple[Cluster, io.BytesIO]:
    path = tmp_path / "start.yaml"
    path.write_text(SCENARIO)
    return start_cluster(load_scenario(path).variant("v7"), "start")


def start_cluster(variant: VariantSpec, scenario: str) -> tuple[Cluster, io.BytesIO]:
    """A cluster built and started as `simulate` does, its events written to the buffer."""
    strategies = {kind: registry.instantiate(kind, ref.name, dict(ref.options))
                  for kind, ref in variant.strategies.items()}
    sim = Simulation()
    sink = io.BytesIO()
    log = EventLog(sink, lambda: sim.now_us / 1000, variant=variant.name)
    context = RunContext(scenario, variant.name, lambda: sim.now_us / 1000, lambda: log.count)
    cluster = Cluster(variant, sim, Streams(variant.seed), log,
                      guard_all(strategies, variant, context))
    cluster.build()
    cluster.start()
    return cluster, sink


def events(sink: io.BytesIO, name: str) -> list[dict[str, object]]:
    return [e for e in map(orjson.loads, sink.getvalue().splitlines()) if e["event"] == name]


def test_each_fetcher_is_woken_once_not_once_per_partition(tmp_path: Path) -> None:
    cluster, _ = started(tmp_path)
    fetchers = [f for b in cluster.brokers.values() for f in b.fetchers.values()]
    followed = sum(len(f.partitions) for f in fetchers)
    assert len(fetchers) == 3 * 2 * 2 and followed == 30 * 2 + 12  # (leader, slot) each
    cluster.sim.run(0)  # everything due at t=0: each fetcher's first send, nothing else
    assert cluster.sim.steps == len(fetchers)
    assert all(f.in_flight for f in fetchers)


def test_brokers_share_the_start_up_metadata_until_one_is_told_more(tmp_path: Path) -> None:
    cluster, sink = started(tmp_path)
    b0, b1, b2 = (cluster.brokers[i].metadata_cache for i in range(3))
    leaders = {key: state.leader for key, state in cluster.zk.partitions.items()}
    assert b0.leaders == leaders and b0.leaders is b1.leaders is b2.leaders
    assert b0.isrs is b1.isrs
    assert b0.isrs[("a", 0)] == cluster.zk.partitions[("a", 0)].isr
    assert not events(sink, "metadata.updated")

    epoch = cluster.controller.epoch if cluster.controller else 0
    key = ("a", 0)
    new_leader = cluster.zk.partitions[key].isr[1]
    cluster.brokers[0].on_update_metadata(epoch, {key: new_leader}, {key: (new_leader,)})
    assert b0.leaders[key] == new_leader and b0.isrs[key] == (new_leader,)
    assert b1.leaders[key] == leaders[key] and b1.isrs[key] != (new_leader,)
    assert b1.leaders is b2.leaders and b0.leaders is not b1.leaders
    assert [(e["broker"], e["partition"], e["leader"]) for e in
            events(sink, "metadata.updated")] == [(0, 0, new_leader)]


def test_a_crash_empties_only_its_own_isr_cache(tmp_path: Path) -> None:
    cluster, _ = started(tmp_path)
    cluster.crash(2, power_loss=False)
    assert cluster.brokers[2].metadata_cache.isrs == {}
    assert len(cluster.brokers[0].metadata_cache.isrs) == len(cluster.zk.partitions)
