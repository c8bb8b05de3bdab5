"""The simulated cluster of one variant: it builds the brokers and the control plane (ZooKeeper
and its controller, or KRaft's quorum: rig.strategies.controller), wires them to one transport
(rig.cluster.transport); the faults act on the nodes' processes through it
(rig.cluster.process_faults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rig.cluster import coast_begin, coast_lines
from rig.cluster.broker import Broker
from rig.cluster.coast import Coast, Ties
from rig.cluster.context import NodeContext, Strategies, TopicConfigs
from rig.cluster.controller import Controller
from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.final_state import FinalState, PartitionView, ReplicaView
from rig.cluster.log_config import log_factory
from rig.cluster.network import Network
from rig.cluster.offsets import OffsetStore
from rig.cluster.process_faults import ProcessFaults
from rig.cluster.replica import Replica, Role, TopicPartition
from rig.cluster.shutdown import ShutdownHandle
from rig.cluster.transport import Transport
from rig.cluster.wire import Meter
from rig.cluster.zk_control import ZooKeeperMode
from rig.cluster.zookeeper import ZooKeeper
from rig.engine import Simulation, Streams
from rig.errors import PluginError
from rig.events import EventLog, names
from rig.hashing import OFFSETS_TOPIC, fetcher_id
from rig.scenario.model import TopicSpec, VariantSpec
from rig.strategies.placement import PlacementError, check_assignment
from rig.strategies.placement.explicit import ExplicitPlacement

__all__ = ["Cluster", "ShutdownHandle"]


class Cluster(ProcessFaults):
    """The model of one variant; strategies are instances chosen by the caller."""

    def __init__(self, variant: VariantSpec, sim: Simulation, streams: Streams, log: EventLog,
                 strategies: dict[str, Any], meter: Meter | None = None):
        self.variant = variant
        self.config = variant.config
        self.sim = sim
        self.streams = streams
        self.log = log
        self.strategies = Strategies.of(strategies)
        self.meter = meter or Meter()
        self.network = Network(variant.network, {b.id: b.rack for b in variant.brokers},
                               streams.get("network"))
        sessions = self.strategies.fetch_session
        self.topic_config = {t.name: t.config for t in variant.topics}
        self.topics = TopicConfigs(self.topic_config, self.config)
        self.brokers: dict[int, Broker] = {}
        # The wire: every message between nodes (rig.cluster.transport).
        # The control plane (rig.strategies.controller): ZooKeeper and its controller, or KRaft.
        # Typed loosely: each kind has a few calls of its own (ZooKeeper's faults, KRaft's
        # controlled shutdown) that rig validate allows only with it.
        kind = strategies.get("controller") or ZooKeeperMode()
        self.control: Any = kind.control_plane(self)
        self.transport = Transport(sim, self.network, self.brokers, self.control.nodes,
                                   self.control.node_alive)
        self.send = self.transport.send
        self.deliver_at = self.transport.deliver_at
        self.backlogged = self.transport.backlogged
        self.after_stall = self.transport.after_stall
        # Idle fetch rounds advance in closed form (rig.cluster.coast): `events: fetch-aggregated`
        # logs each run of them as one fetch.idle, a full log gets their lines (coast_lines).
        self.lines = coast_lines.lines_for(sim, log, variant.events)
        self.coasting = self.lines is not None or variant.events == "fetch-aggregated"
        self.node_context = NodeContext(
            sim, log.emit, self.send, self.after_stall, self.strategies, self.topics,
            self.meter, variant.os, self.control.isr_writer, self.new_fetcher,
            {b.id: b.rack for b in variant.brokers}, log.kind, coasting=self.coasting)
        for b in variant.brokers:
            config = variant.broker_config(b.id)
            self.brokers[b.id] = Broker(self.node_context, b.id, b.rack, config, sessions.new_cache(
                b.id, config.max_incremental_fetch_session_cache_slots,
                streams.get(f"fetch_session/cache/{b.id}")))
        self.assignments: dict[str, list[tuple[int, ...]]] = {}
        self.producers: list[Any] = []
        self.clients: list[Any] = []  # who hears of connection resets: fetch clients, group
        # coordinators' clients, the brokers' AlterIsr channels to the controller
        self.offset_store = OffsetStore()  # values of __consumer_offsets records
        self.coasts: dict[Coast, None] = {}
        self.failed_starts: set[int] = set()  # brokers whose last start failed (ProcessFaults)
        self.supervised = False  # the quiesce starts them again (ProcessFaults.supervise)
        self.ties = Ties(sim, watch=self.coasting)  # their entries' places in the queue
        self.horizon_us = (variant.duration_ms + variant.quiesce_ms) * 1000  # the latest end

    # -- building ------------------------------------------------------------------------------
    def build(self) -> None:
        """Place every topic; the first replica of each partition starts as its leader."""
        placement = self.strategies.placement
        rng = self.streams.get("placement")
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
                raise PluginError(f"placement {chooser.name!r} returned an invalid assignment "
                                  f"for topic {topic.name!r}: " + "; ".join(problems[:5]))
            self.assignments[topic.name] = assignment
            self.log.emit(names.TOPIC_CREATED, topic=topic.name, partitions=topic.partitions,
                          replication_factor=topic.replication_factor, placement=chooser.name,
                          min_insync_replicas=self.topics.leader_min_isr(
                              (topic.name, 0), topic.replication_factor, self.config))
            self._create_partitions(topic, assignment)

    def _create_partitions(self, topic: TopicSpec, assignment: list[tuple[int, ...]]) -> None:
        """Each partition's replicas with empty logs, and its state in ZooKeeper. What is the
        same for every partition of the topic (its log settings on each broker, the fetcher
        hash) is worked out once."""
        name = topic.name
        emit = self.log.emit
        create = self.control.create_partition
        brokers = self.brokers
        new_log_on = {b.id: log_factory(topic.config, self.variant.broker_config(b.id),
                                        internal=name == OFFSETS_TOPIC)
                      for b in self.variant.brokers}
        fetchers = self.config.num_replica_fetchers
        for partition, replicas in enumerate(assignment):
            key = (name, partition)
            slot = fetcher_id(name, partition, fetchers)
            emit(names.PARTITION_ASSIGNED, topic=name, partition=partition,
                 replicas=list(replicas), leader=replicas[0])
            for b in replicas:
                brokers[b].add_replica(Replica(key, b, replicas, new_log_on[b](), slot))
            create(key, replicas)

    def start(self) -> None:
        """Start as a running cluster (as the control plane says); no election at t=0."""
        self.control.start()

    def assignment(self, key: TopicPartition) -> tuple[int, ...]:
        """The partition's replicas now (KRaft: its registration's, which reassign changes)."""
        return self.control.current_replicas(key)

    def place_client(self, node: str, role: str, rack: str | None) -> None:
        """A producer's or consumer's client.rack: its links follow it, and the log says where
        it runs (the traffic ledger needs every node's zone). Nothing is logged without one."""
        if rack is None:
            return
        self.network.place(node, rack)
        self.log.emit(names.CLIENT_RACK, client=node, role=role, rack=rack)

    def live_brokers(self) -> list[int]:
        """The ids of the brokers whose process runs, lowest first (where a client may send a
        Metadata or FindCoordinator request)."""
        return [b for b in sorted(self.brokers) if self.brokers[b].alive]

    def unclean_election(self, key: TopicPartition) -> bool:
        return self.topics.unclean_election(key)

    # -- coasting ------------------------------------------------------------------------------
    def begin_coast(self, client: Any, request: Any, response: Any) -> bool:
        """Whether `client` coasts from here: its idle rounds go on in closed form."""
        return coast_begin.begin(self, client, request, response)

    def finish_coasting(self) -> None:
        """The run is over: every coast logs its rounds (and leaves the state they left)."""
        self.ties.closed = True  # (what they queue never runs: its order is no matter)
        if self.lines is not None:
            self.lines.flush()  # every coast's lines up to the end, in the run's order
        for coast in list(self.coasts):
            coast.wake()

    # -- the control plane -------------------------------------------------------------------
    @property
    def partition_states(self) -> Mapping[TopicPartition, Any]:
        """Each partition's leader, leader epoch and ISR as the control plane holds them."""
        return self.control.partitions

    @property
    def zk(self) -> ZooKeeper:
        """ZooKeeper (the `zookeeper` controller kind only: its faults act on it)."""
        return self.control.zk

    @property
    def controller(self) -> Controller | None:
        return self.control.controller

    def new_fetcher(self, broker: Broker, leader: int, slot: int) -> ReplicaFetcher:
        return ReplicaFetcher(self, broker, leader, slot,
                              self.strategies.fetch_session.new_client())

    # -- the end of the run -------------------------------------------------------------------
    def final_state(self) -> FinalState:
        """Every partition's replicas, read only, for the checks (one reassign added is
        missing until its broker creates it)."""
        brokers, partitions = self.brokers, self.control.partitions

        def view(key: TopicPartition) -> PartitionView:
            assignment = self.assignment(key)
            return PartitionView(partitions[key].leader, assignment, {
                b: ReplicaView(brokers[b].replicas[key], brokers[b].alive) for b in assignment
                if key in brokers[b].replicas})

        return FinalState(partitions, view)

    # -- settling ------------------------------------------------------------------------------
    def settled(self) -> bool:
        """Every partition led, its ISR full, followers caught up, no produce in flight."""
        if not self.control.has_controller() or any(not b.alive for b in self.brokers.values()):
            return False
        if any(p.busy for p in self.producers):
            return False
        for key, state in self.control.partitions.items():
            leader = self.brokers[state.leader] if state.leader >= 0 else None
            if leader is None:
                return False
            replica = leader.replicas[key]
            if replica.role is not Role.LEADER or len(replica.isr) != len(replica.assignment):
                return False
            if replica.high_watermark != replica.leo:
                return False
            if any(getattr(self.brokers[b].replicas.get(key), "leo", -1) != replica.leo
                   for b in replica.assignment):
                return False
        return True

