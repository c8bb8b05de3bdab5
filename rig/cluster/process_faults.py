"""What happens to a node's process, seen from the cluster: a crash and the connection resets
it causes, a power loss, a controlled shutdown, a JVM halt, a restart, a stall; a KRaft
controller's crash and restart (rig.faults.kinds, a follower's fetcher and the shutdown handle
call these). The broker resets its own parts (rig.cluster.broker); here the transport, the
clients and the control plane hear of it, after the coasts that involve the broker woke."""

from __future__ import annotations

from functools import partial
from typing import Any

from rig.cluster.broker import Broker
from rig.cluster.coast import Coast
from rig.cluster.network import Network
from rig.cluster.replica import TopicPartition
from rig.cluster.shutdown import ShutdownHandle
from rig.cluster.transport import Transport
from rig.engine import Simulation
from rig.events import EventLog, names


class ProcessFaults:
    """The faults that act on the nodes' processes. Cluster (rig.cluster.cluster) extends this
    and sets what is declared below when it builds the variant."""

    sim: Simulation
    log: EventLog
    network: Network
    transport: Transport
    brokers: dict[int, Broker]
    control: Any  # the control plane (rig.strategies.controller)
    producers: list[Any]
    clients: list[Any]
    coasts: dict[Coast, None]
    failed_starts: set[int]
    supervised: bool

    def wake_coasts(self, broker_id: int) -> None:
        """Rebuild every coast that involves `broker`, as leader or as follower, before
        something happens to it."""
        for coast in list(self.coasts):
            if coast.leader.id == broker_id or coast.fetcher.node == broker_id:
                coast.wake()

    def stall(self, broker: Broker, on: bool) -> None:
        self.wake_coasts(broker.id)
        broker.stalled = on
        if not on:
            self.transport.stall_ended(broker.id)
            for fetcher in list(broker.fetchers.values()):
                fetcher.wake()

    def controlled_shutdown(self, broker_id: int) -> ShutdownHandle:
        """A clean stop: the broker asks its controller to move its leaderships and take it out
        of the ISRs, then its process stops (`broker.shutdown`). ZooKeeper mode:
        rig.cluster.controlled_shutdown (KafkaServer.controlledShutdown); KRaft: the broker's
        lifecycle manager. The handle says whether it stopped yet."""
        broker = self.brokers[broker_id]
        handle = ShutdownHandle(self, broker)
        if broker.alive:
            self.control.controlled_shutdown(broker, handle)
        return handle

    def crash(self, broker_id: int, power_loss: bool, shutdown: bool | None = None) -> None:
        """The process dies (`shutdown`: it stopped, after a controlled shutdown or not)."""
        broker = self.brokers[broker_id]
        if not broker.alive:
            return
        lost = self._stop(broker, power_loss)
        if power_loss:
            self.log.emit(names.BROKER_POWER_LOSS, broker=broker_id, records_lost=lost)
        elif shutdown is not None:
            self.log.emit(names.BROKER_SHUTDOWN, broker=broker_id, controlled=shutdown)
        else:
            self.log.emit(names.BROKER_CRASH, broker=broker_id)
        self._stopped(broker)

    def startup_failed(self, broker_id: int, owner: int) -> None:
        """The process that started could not register (its broker's previous process still
        holds the registration, `owner`: that process's incarnation) and exits."""
        broker = self.brokers[broker_id]
        incarnation = broker.incarnation
        self._stop(broker, power_loss=False)
        self.failed_starts.add(broker_id)
        if self.supervised:
            self._start_later(broker_id)
        self.log.emit(names.BROKER_STARTUP_FAILED, broker=broker_id, incarnation=incarnation,
                      reason="node-exists", owner=owner)
        self._stopped(broker)

    def _stop(self, broker: Broker, power_loss: bool) -> int:
        """The process's end as its peers see it; returns the records a power loss took."""
        self.wake_coasts(broker.id)
        lost = broker.crash(power_loss)
        self.transport.forget(broker.id)
        if not power_loss:  # (a power loss resets nothing: clients wait their timeouts)
            self.reset_connections(broker.id)
        return lost

    def reset_connections(self, node: int) -> None:
        """`node`'s process is gone but its machine is up: its sockets are reset, and clients
        connected to it learn that after a round trip."""
        self.clients = [c for c in self.clients if not c.stopped]
        for client in [*self.clients, *self.producers]:
            self.sim.after(self.network.round_trip_us(client.node, node),
                           partial(client.connection_reset, node))

    def _stopped(self, broker: Broker) -> None:
        broker.report_lost_sessions()
        self.control.broker_crashed(broker)

    def crash_controller(self, node: int | str) -> int | None:
        """A KRaft controller's process dies ("active": the active one; a combined one is its
        broker's process). Returns the node."""
        control = self.control
        if node == "active" and (node := control.active_node()) is None:
            return None
        if node in self.brokers:
            self.crash(int(node), power_loss=False)
        else:
            control.crash_controller(int(node))
        return int(node)

    def restart_controller(self, node: int) -> None:
        self.restart(node) if node in self.brokers else self.control.restart_controller(node)

    def halt(self, broker_id: int, key: TopicPartition, leader: int, leader_leo: int,
             log_end_offset: int) -> None:
        """A follower found the leader's log end below its own, unclean election off: the JVM
        halts (ReplicaFetcherThread.handleOffsetOutOfRange), a process crash (docs/kafka.md §11)."""
        self.log.emit(names.BROKER_HALT, broker=broker_id, topic=key[0], partition=key[1],
                      leader=leader, leader_log_end_offset=leader_leo,
                      log_end_offset=log_end_offset)
        self.crash(broker_id, power_loss=False)

    def restart(self, broker_id: int) -> None:
        broker = self.brokers[broker_id]
        if broker.alive:
            return
        broker.restart()
        self.failed_starts.discard(broker_id)
        self.log.emit(names.BROKER_RESTART, broker=broker_id, incarnation=broker.incarnation)
        self.control.broker_restarted(broker)

    def supervise(self) -> None:
        """From now on (the quiesce), each broker whose start failed (its crashed process's
        ZooKeeper session still held its registration) is started again a session timeout
        later, as a supervisor would: ZooKeeper has expired that session by then."""
        self.supervised = True
        for broker_id in sorted(self.failed_starts):
            self._start_later(broker_id)

    def _start_later(self, broker_id: int) -> None:
        timeout_ms = self.brokers[broker_id].config.zookeeper_session_timeout_ms
        self.sim.after(timeout_ms * 1000, partial(self.restart, broker_id))
