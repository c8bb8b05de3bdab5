"""The simulated cluster of one variant: it builds the brokers, ZooKeeper and the controller,
and carries every message between nodes.

A message is delivered only if, when it arrives, its destination is up, is the same incarnation
it was sent to (a restart resets connections), and no network partition separates the two.
A stalled broker (a GC pause) receives its messages when the stall ends.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rig.cluster.broker import Broker
from rig.cluster.coast import Coast
from rig.cluster.controller import Controller
from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.network import Network, Node
from rig.cluster.offsets import OffsetStore
from rig.cluster.replica import Replica, Role, TopicPartition
from rig.cluster.storage import log_factory
from rig.cluster.wire import Meter
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, PartitionState, ZooKeeper
from rig.engine import Simulation, Streams
from rig.errors import PluginError
from rig.events import EventLog, names
from rig.hashing import OFFSETS_TOPIC, fetcher_id
from rig.scenario.model import BrokerConfig, TopicSpec, VariantSpec
from rig.strategies.placement import PlacementError, check_assignment
from rig.strategies.placement.explicit import ExplicitPlacement

# How often a reliable message (a ZooKeeper watch, a controller request) is tried again while
# the link is cut: the reconnect backoff of ZooKeeper's client and the controller's channel.
RESEND_MS = 100


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
        self.network = Network(variant.network, {b.id: b.rack for b in variant.brokers},
                               streams.get("network"))
        sessions = strategies["fetch_session"]
        self.brokers: dict[int, Broker] = {}
        for b in variant.brokers:
            self.brokers[b.id] = Broker(self, b.id, b.rack, sessions.new_cache(
                b.id, variant.broker_config(b.id).max_incremental_fetch_session_cache_slots,
                streams.get(f"fetch_session/cache/{b.id}")))
        self.zk = ZooKeeper(self)
        self.controller: Controller | None = None
        self.assignments: dict[str, list[tuple[int, ...]]] = {}
        self.topic_config = {t.name: t.config for t in variant.topics}
        self._stalled_mail: dict[int, list[Callable[[], None]]] = {}
        self._stalled_outbox: dict[int, list[Callable[[], None]]] = {}
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
        placement = self.strategies["placement"]
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

    # -- configuration lookups ---------------------------------------------------------------
    def min_isr(self, key: TopicPartition) -> int:
        value = self.topic_config[key[0]].get("min.insync.replicas")
        return int(value) if value is not None else self.config.min_insync_replicas

    def unclean_election(self, key: TopicPartition) -> bool:
        value = self.topic_config[key[0]].get("unclean.leader.election.enable")
        return bool(value) if value is not None else self.config.unclean_leader_election_enable

    def flush_messages(self, key: TopicPartition, config: BrokerConfig) -> int | None:
        value = self.topic_config[key[0]].get("flush.messages")
        return int(value) if value is not None else config.log_flush_interval_messages

    # -- messages ------------------------------------------------------------------------------
    def _incarnation(self, node: Node) -> int:
        broker = self.brokers.get(node) if isinstance(node, int) else None
        return broker.incarnation if broker is not None else 0

    def _up(self, node: Node) -> bool:
        if node == ZK:
            return self.zk.alive
        broker = self.brokers.get(node) if isinstance(node, int) else None
        return broker.alive if broker is not None else True

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None:
        """Carry a message of `nbytes` from `src` to `dst`; `deliver` runs on arrival.

        A message meeting a cut link or a lossy one is lost, unless `reliable`: then it is
        sent again every RESEND_MS while both ends live, as ZooKeeper re-delivers a watch to
        a client that reconnects within its session and the controller's channel retries a
        request until it gets through (each end's incarnation must stay the same: a restarted
        process starts a new conversation)."""
        if not self._up(src):
            return
        sender = self.brokers.get(src) if isinstance(src, int) else None
        if sender is not None and sender.stalled:
            # A paused process sends nothing (its purgatory timers fire into the pause too):
            # the message leaves when the stall ends.
            self._stalled_outbox.setdefault(sender.id, []).append(
                lambda: self.send(src, dst, nbytes, deliver, reliable=reliable))
            return
        incarnation = self._incarnation(dst)
        source_incarnation = self._incarnation(src)

        def resend() -> None:
            if (self._up(src) and self._incarnation(src) == source_incarnation
                    and self._up(dst) and self._incarnation(dst) == incarnation):
                self.send(src, dst, nbytes, deliver, reliable=True)

        arrival = self.network.arrival_us(src, dst, nbytes, self.sim.now_us)
        if arrival is None:  # lost on a lossy link
            if reliable:
                self.sim.after(RESEND_MS * 1000, resend)
            return
        self._arrive(arrival, src, dst, deliver, incarnation, resend if reliable else None)

    def deliver_at(self, arrival_us: int, src: Node, dst: Node, deliver: Callable[[], None],
                   sent_us: int) -> None:
        """A message sent at `sent_us` in closed form (a coasting fetch round, which kept the
        link busy itself) arrives at `arrival_us` under the rules of `send`."""
        self._arrive(arrival_us, src, dst, deliver, self._incarnation(dst), None, sent_us)

    def _arrive(self, arrival_us: int, src: Node, dst: Node, deliver: Callable[[], None],
                incarnation: int, resend: Callable[[], None] | None,
                sent_us: int | None = None) -> None:
        def arrive() -> None:
            if not self._up(dst) or self._incarnation(dst) != incarnation:
                return
            if self.network.blocked(src, dst):
                if resend is not None:
                    self.sim.after(RESEND_MS * 1000, resend)
                return
            broker = self.brokers.get(dst) if isinstance(dst, int) else None
            if broker is not None and broker.stalled:
                self._stalled_mail.setdefault(broker.id, []).append(deliver)
                return
            deliver()

        self.sim.at(arrival_us, arrive, scheduled_us=sent_us)

    def after_stall(self, broker: Broker, action: Callable[[], None]) -> None:
        """Run `action` when `broker`'s stall ends (work its paused threads would have done)."""
        self._stalled_mail.setdefault(broker.id, []).append(action)

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
            for send in self._stalled_outbox.pop(broker.id, []):
                send()
            mail = self._stalled_mail.pop(broker.id, [])
            for deliver in mail:
                deliver()
            for fetcher in list(broker.fetchers.values()):
                fetcher.wake()

    def _heartbeats(self, broker: Broker) -> None:
        """The broker's ZooKeeper session: register now, then heartbeat every timeout/3."""
        incarnation = broker.incarnation
        period_us = max(1, broker.config.zookeeper_session_timeout_ms // 3) * 1000

        def beat() -> None:
            if broker.incarnation != incarnation or not broker.alive:
                return
            if not broker.stalled:
                self.send(broker.id, ZK, ZK_MESSAGE_BYTES,
                          lambda: self.zk.heartbeat(broker.id, incarnation))
            broker.tasks.append(self.sim.after(period_us, beat))

        beat()

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

    # -- ISR changes (the leader writes ZooKeeper) ---------------------------------------------
    def change_isr(self, broker: Broker, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        replica.isr_change_pending = True
        key = replica.key
        epoch = replica.leader_epoch
        version = replica.zk_version
        incarnation = broker.incarnation

        def at_zk() -> None:
            written = self.zk.update_isr(key, epoch, isr, version)
            self.send(ZK, broker.id, ZK_MESSAGE_BYTES, lambda: applied(written))

        def applied(written: int | None) -> None:
            if broker.incarnation != incarnation or replica.leader_epoch != epoch:
                return
            replica.isr_change_pending = False
            if written is None or replica.role is not Role.LEADER:
                return  # the controller changed the partition first: its LeaderAndIsr wins
            replica.isr = isr
            replica.zk_version = written
            broker.record_isr_change(key)
            if shrink:
                self.log.emit(names.ISR_SHRINK, topic=key[0], partition=key[1],
                              leader=broker.id, isr=list(isr), removed=shrink, by="leader")
            if expand:
                self.log.emit(names.ISR_EXPAND, topic=key[0], partition=key[1],
                              leader=broker.id, isr=list(isr), added=expand)
            broker.maybe_advance_hw(replica)

        self.send(broker.id, ZK, ZK_MESSAGE_BYTES, at_zk)

    def propagate_isr_changes(self, broker: Broker, keys: tuple[TopicPartition, ...]) -> None:
        """`broker` creates an /isr_change_notification child for `keys`; the controller's
        watch on that path fires when it is created."""

        def at_zk() -> None:
            seq = self.zk.add_isr_change_notification(keys)
            self.log.emit(names.ISR_CHANGE_NOTIFICATION, broker=broker.id, notification=seq,
                          partitions=len(keys))
            self.notify_controller(lambda c: c.on_isr_change_notification())

        self.send(broker.id, ZK, ZK_MESSAGE_BYTES + 30 * len(keys), at_zk)

    # -- the model's factories -----------------------------------------------------------------
    def new_fetcher(self, broker: Broker, leader: int, slot: int) -> ReplicaFetcher:
        return ReplicaFetcher(self, broker, leader, slot,
                              self.strategies["fetch_session"].new_client())

    # -- faults ----------------------------------------------------------------------------------
    def crash(self, broker_id: int, power_loss: bool) -> None:
        broker = self.brokers[broker_id]
        if not broker.alive:
            return
        self.wake_coasts(broker_id)
        lost = broker.crash(power_loss)
        self._stalled_mail.pop(broker_id, None)
        self._stalled_outbox.pop(broker_id, None)
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

