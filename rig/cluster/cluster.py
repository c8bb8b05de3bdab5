"""The simulated cluster of one variant: it builds the brokers, ZooKeeper and the controller,
wires them to one transport (rig.cluster.transport), and applies faults to them."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rig.cluster import coast_begin
from rig.cluster.broker import Broker
from rig.cluster.coast import Coast
from rig.cluster.context import NodeContext, Strategies, TopicConfigs
from rig.cluster.controller import Controller
from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.final_state import FinalState, PartitionView, ReplicaView
from rig.cluster.network import Network
from rig.cluster.offsets import OffsetStore
from rig.cluster.replica import Replica, Role, TopicPartition
from rig.cluster.storage import log_factory
from rig.cluster.transport import Transport
from rig.cluster.wire import Meter
from rig.cluster.zk_client import ZkClient
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, PartitionState, ZooKeeper
from rig.engine import Simulation, Streams
from rig.errors import PluginError
from rig.events import EventLog, names
from rig.hashing import OFFSETS_TOPIC, fetcher_id
from rig.scenario.model import TopicSpec, VariantSpec
from rig.strategies.placement import PlacementError, check_assignment
from rig.strategies.placement.explicit import ExplicitPlacement


class Cluster:
    """The model of one variant; strategies are instances chosen by the caller."""

    zk: ZooKeeper

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
        self.transport = Transport(sim, self.network, self.brokers, lambda: self.zk.alive)
        self.send = self.transport.send
        self.deliver_at = self.transport.deliver_at
        self.after_stall = self.transport.after_stall
        self.node_context = NodeContext(
            sim, log.emit, self.send, self.after_stall, self.strategies, self.topics,
            self.meter, variant.os, ZkClient(self), self.new_fetcher,
            {b.id: b.rack for b in variant.brokers})
        for b in variant.brokers:
            config = variant.broker_config(b.id)
            self.brokers[b.id] = Broker(self.node_context, b.id, b.rack, config, sessions.new_cache(
                b.id, config.max_incremental_fetch_session_cache_slots,
                streams.get(f"fetch_session/cache/{b.id}")))
        self.zk = ZooKeeper(self)
        self.controller: Controller | None = None
        self.assignments: dict[str, list[tuple[int, ...]]] = {}
        self.producers: list[Any] = []
        self.clients: list[Any] = []  # every fetch client (followers and consumers)
        self.offset_store = OffsetStore()  # values of __consumer_offsets records
        # `events: fetch-aggregated`: idle fetch rounds advance in closed form (rig.cluster.coast).
        self.coasting = variant.events == "fetch-aggregated"
        self.coasts: dict[Coast, None] = {}
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
                          replication_factor=topic.replication_factor, placement=chooser.name)
            self._create_partitions(topic, assignment)

    def _create_partitions(self, topic: TopicSpec, assignment: list[tuple[int, ...]]) -> None:
        """Each partition's replicas with empty logs, and its state in ZooKeeper. What is the
        same for every partition of the topic (its log settings on each broker, the fetcher
        hash) is worked out once."""
        name = topic.name
        emit = self.log.emit
        partitions = self.zk.partitions
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
            partitions[key] = PartitionState(replicas[0], 0, tuple(replicas))

    def start(self) -> None:
        """Start as a running cluster: every broker registered with ZooKeeper, the lowest id
        controller, each partition led by its first replica at epoch 0 with a full ISR. No
        election happens at t=0: the scenario describes a cluster that is already up."""
        self.zk.register_running(sorted(self.brokers))
        self.controller = Controller(self, self.zk.controller or 0, self.zk.controller_epoch)
        self.log.emit(names.CONTROLLER_ELECTED, broker=self.controller.broker,
                      epoch=self.controller.epoch)
        # Every broker keeps these two maps as its metadata cache (see on_update_metadata).
        leaders = {key: state.leader for key, state in self.zk.partitions.items()}
        isrs = {key: tuple(state.isr) for key, state in self.zk.partitions.items()}
        for broker in self.brokers.values():
            states = {key: self.zk.partitions[key] for key in broker.replicas}
            broker.on_leader_and_isr(self.controller.epoch, states, quiet=True)
            broker.on_update_metadata(self.controller.epoch, leaders, isrs, quiet=True)
            broker.start_tasks()
            self._heartbeats(broker)

    def assignment(self, key: TopicPartition) -> tuple[int, ...]:
        return self.assignments[key[0]][key[1]]

    def place_client(self, node: str, role: str, rack: str | None) -> None:
        """A producer's or consumer's client.rack: its links follow it, and the log says where
        it runs (the traffic ledger needs every node's zone). Nothing is logged without one."""
        if rack is None:
            return
        self.network.place(node, rack)
        self.log.emit(names.CLIENT_RACK, client=node, role=role, rack=rack)

    # -- configuration lookups ---------------------------------------------------------------
    def min_isr(self, key: TopicPartition) -> int:
        return self.topics.min_isr(key)

    def unclean_election(self, key: TopicPartition) -> bool:
        return self.topics.unclean_election(key)

    # -- messages ------------------------------------------------------------------------------
    def begin_coast(self, client: Any, request: Any, response: Any) -> bool:
        """Whether `client` coasts from here: its idle rounds go on in closed form."""
        return coast_begin.begin(self, client, request, response)

    def wake_coasts(self, broker_id: int) -> None:
        """Rebuild every coast that involves `broker`, as leader or as follower, before
        something happens to it."""
        for coast in list(self.coasts):
            if coast.leader.id == broker_id or coast.fetcher.node == broker_id:
                coast.wake()

    def finish_coasting(self) -> None:
        """The run is over: every coast logs its rounds (and leaves the state they left)."""
        for coast in list(self.coasts):
            coast.wake()

    def stall(self, broker: Broker, on: bool) -> None:
        self.wake_coasts(broker.id)
        broker.stalled = on
        if not on:
            self.transport.stall_ended(broker.id)
            for fetcher in list(broker.fetchers.values()):
                fetcher.wake()

    def _heartbeats(self, broker: Broker) -> None:
        """The broker's ZooKeeper session: register now, then heartbeat every timeout/3."""
        incarnation = broker.incarnation

        def beat() -> None:
            self.send(broker.id, ZK, ZK_MESSAGE_BYTES,
                      lambda: self.zk.heartbeat(broker.id, incarnation))

        broker.every(max(1, broker.config.zookeeper_session_timeout_ms // 3), beat, now=True)

    # -- the controller -----------------------------------------------------------------------
    def notify_controller(self, action: Callable[[Controller], None]) -> None:
        """ZooKeeper fires the controller's watch: the news reaches it over the network."""
        controller = self.controller
        if controller is None:
            return
        self.send(ZK, controller.broker, ZK_MESSAGE_BYTES,
                  lambda: action(controller) if controller.active else None, reliable=True)

    def controller_elected(self, broker: int, epoch: int) -> None:
        if self.controller is not None:
            self.controller.active = False
        self.controller = Controller(self, broker, epoch)
        self.controller.on_elected()

    def controller_gone(self) -> None:
        if self.controller is not None:
            self.controller.active = False
        self.controller = None

    def run_for_controller(self, broker: int) -> None:
        self.send(broker, ZK, ZK_MESSAGE_BYTES, lambda: self.zk.try_become_controller(broker))

    # -- the model's factories -----------------------------------------------------------------
    def new_fetcher(self, broker: Broker, leader: int, slot: int) -> ReplicaFetcher:
        return ReplicaFetcher(self, broker, leader, slot,
                              self.strategies.fetch_session.new_client())

    # -- faults ----------------------------------------------------------------------------------
    def crash(self, broker_id: int, power_loss: bool, shutdown: bool | None = None) -> None:
        """The process dies (`shutdown`: it stopped, after a controlled shutdown or not)."""
        broker = self.brokers[broker_id]
        if not broker.alive:
            return
        self.wake_coasts(broker_id)
        lost = broker.crash(power_loss)
        self.transport.forget(broker_id)
        if not power_loss:
            # The process is gone but the machine is up: its sockets are reset, and clients
            # with a request open to it learn that after a round trip (a power loss resets
            # nothing: they wait for their request timeouts).
            self.clients = [c for c in self.clients if not c.stopped]
            for client in [*self.clients, *self.producers]:
                rtt_us = 2 * self.network.base_link(client.node, broker_id).latency_us
                self.sim.after(rtt_us, partial(client.connection_reset, broker_id))
        if power_loss:
            self.log.emit(names.BROKER_POWER_LOSS, broker=broker_id, records_lost=lost)
        elif shutdown is not None:
            self.log.emit(names.BROKER_SHUTDOWN, broker=broker_id, controlled=shutdown)
        else:
            self.log.emit(names.BROKER_CRASH, broker=broker_id)
        broker.report_lost_sessions()

    def restart(self, broker_id: int) -> None:
        broker = self.brokers[broker_id]
        if broker.alive:
            return
        broker.restart()
        self.log.emit(names.BROKER_RESTART, broker=broker_id, incarnation=broker.incarnation)
        self._heartbeats(broker)

    # -- the end of the run -------------------------------------------------------------------
    def final_state(self) -> FinalState:
        """A read-only view of every partition's replicas, for the checks' verdicts."""
        brokers, partitions = self.brokers, self.zk.partitions

        def view(key: TopicPartition) -> PartitionView:
            assignment = self.assignment(key)
            return PartitionView(partitions[key].leader, assignment, {
                b: ReplicaView(brokers[b].replicas[key], brokers[b].alive) for b in assignment})

        return FinalState(partitions, view)

    # -- settling ------------------------------------------------------------------------------
    def settled(self) -> bool:
        """Every partition led, its ISR full, followers caught up, no produce in flight."""
        if self.controller is None or any(not b.alive for b in self.brokers.values()):
            return False
        if any(p.busy for p in self.producers):
            return False
        for key, state in self.zk.partitions.items():
            leader = self.brokers[state.leader] if state.leader >= 0 else None
            if leader is None:
                return False
            replica = leader.replicas[key]
            if replica.role is not Role.LEADER or len(replica.isr) != len(replica.assignment):
                return False
            if replica.high_watermark != replica.leo:
                return False
            for b in replica.assignment:
                if self.brokers[b].replicas[key].leo != replica.leo:
                    return False
        return True

