"""Builds the simulated cluster of one variant: brokers, placement, leaders and fetchers."""

from __future__ import annotations

from typing import Any

from rig.cluster.broker import Broker
from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.network import Network
from rig.cluster.partition import FetchState, LeaderPartition
from rig.cluster.wire import Meter
from rig.engine import Simulation, Streams
from rig.errors import PluginError
from rig.events import EventLog, names
from rig.hashing import fetcher_id
from rig.scenario.model import VariantSpec
from rig.strategies.placement import PlacementError, check_assignment
from rig.strategies.placement.explicit import ExplicitPlacement


class Cluster:
    """The model of one variant; strategies are instances chosen by the caller."""

    def __init__(self, variant: VariantSpec, sim: Simulation, streams: Streams, log: EventLog,
                 strategies: dict[str, Any], meter: Meter | None = None):
        self.variant = variant
        self.config = variant.config
        self.sim = sim
        self.streams = streams
        self.log = log
        self.strategies = strategies
        self.meter = meter or Meter()
        self.network = Network(variant.network, {b.id: b.rack for b in variant.brokers})
        sessions = strategies["fetch_session"]
        self.brokers = {
            b.id: Broker(self, b.id, b.rack, sessions.new_cache(
                b.id, self.config.max_incremental_fetch_session_cache_slots,
                streams.get(f"fetch_session/cache/{b.id}")))
            for b in variant.brokers}
        self.fetchers: dict[tuple[int, int, int], ReplicaFetcher] = {}
        self.assignments: dict[str, list[tuple[int, ...]]] = {}

    def build(self) -> None:
        """Place every topic, make the first replica leader, and give followers fetchers."""
        placement = self.strategies["placement"]
        rng = self.streams.get("placement")
        sessions = self.strategies["fetch_session"]
        for broker in self.variant.brokers:
            self.log.emit(names.BROKER_START, broker=broker.id, rack=broker.rack)
        for topic in self.variant.topics:
            # A topic that lists its replicas is created with them, whatever the placement
            # strategy (Kafka's createTopic with a replica assignment skips placement too).
            chooser = placement if topic.assignment is None else ExplicitPlacement()
            try:
                assignment = chooser.assign(self.variant.brokers, topic, rng)
            except PlacementError as exc:
                raise PluginError(f"placement {placement.name!r} refused topic {topic.name!r}: "
                                  f"{exc}") from None
            problems = check_assignment(assignment, self.variant.brokers, topic)
            if problems:
                raise PluginError(f"placement {placement.name!r} returned an invalid assignment "
                                  f"for topic {topic.name!r}: " + "; ".join(problems[:5]))
            self.assignments[topic.name] = assignment
            self.log.emit(names.TOPIC_CREATED, topic=topic.name, partitions=topic.partitions,
                          replication_factor=topic.replication_factor, placement=chooser.name)
            for partition, replicas in enumerate(assignment):
                key = (topic.name, partition)
                leader = self.brokers[replicas[0]]
                leader.leading[key] = LeaderPartition(key, replicas)
                self.log.emit(names.PARTITION_ASSIGNED, topic=topic.name, partition=partition,
                              replicas=list(replicas), leader=leader.id)
                for follower in replicas[1:]:
                    fid = fetcher_id(topic.name, partition, self.config.num_replica_fetchers)
                    fetcher = self.fetchers.get((follower, leader.id, fid))
                    if fetcher is None:
                        fetcher = ReplicaFetcher(self, follower, leader, fid, sessions.new_client())
                        self.fetchers[(follower, leader.id, fid)] = fetcher
                    fetcher.add_partition(key, FetchState())

    def start(self) -> None:
        for fetcher in self.fetchers.values():
            self.log.emit(names.FETCHER_START, broker=fetcher.broker_id, leader=fetcher.leader.id,
                          fetcher=fetcher.fetcher_id, client=fetcher.client_id,
                          partitions=len(fetcher.partitions))
            fetcher.start()
