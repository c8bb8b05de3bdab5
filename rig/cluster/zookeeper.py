"""ZooKeeper as the ZooKeeper-era controller sees it: sessions, ephemeral znodes, and the
partition state the leaders and the controller write (docs/kafka.md §10).

A broker's session lives while its heartbeats arrive; `zookeeper.session.timeout.ms` after the
last one it expires, its ephemeral /brokers/ids/N goes, and the controller hears of it. A
crashed broker's session outlives its process: until it expires, a new process of that broker
cannot register. The first broker whose /controller create arrives wins, with a new controller
epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple, Protocol

from rig.cluster.network import Node
from rig.cluster.replica import TopicPartition
from rig.engine import Simulation, Timer
from rig.events import EventLog, names
from rig.scenario.model import VariantSpec

NODE = "zk"
ZK_MESSAGE_BYTES = 100


@dataclass
class PartitionState:
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    version: int = 0


class ReplicaAssignment(NamedTuple):
    """A partition's assignment as /brokers/topics/<topic> holds it (Kafka's ReplicaAssignment,
    KIP-455): during a reassignment `replicas` is the target followed by the origin's others,
    with the replicas being added and removed."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def origin(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding)

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing)

    def reassign_to(self, target: tuple[int, ...]) -> ReplicaAssignment:
        """ReplicaAssignment.reassignTo: the full set is the target then the origin's others
        (distinct, in that order); adding and removing keep that order."""
        origin = self.origin
        full = tuple(dict.fromkeys((*target, *origin)))
        return ReplicaAssignment(full, tuple(r for r in full if r not in origin),
                                 tuple(r for r in full if r not in target))


class ZkHost(Protocol):
    """What ZooKeeper uses of the model around it (rig.cluster.cluster.Cluster)."""

    variant: VariantSpec
    sim: Simulation
    log: EventLog

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None: ...

    def notify_controller(self, action: Callable[[Any], None]) -> None:
        """Fire the controller's watch: `action(controller)` once the news reaches it."""
        ...

    def controller_elected(self, broker: int, epoch: int) -> None: ...

    def assignment(self, key: TopicPartition) -> tuple[int, ...]: ...

    def controller_gone(self) -> None: ...

    def run_for_controller(self, broker: int) -> None: ...


class ZooKeeper:
    def __init__(self, cluster: ZkHost):
        self.cluster = cluster
        self.alive = True
        self.sessions: dict[int, int] = {}  # broker → registered incarnation
        # broker → its broker epoch: the czxid of its /brokers/ids node (KIP-380), from a count
        # of the registrations, as ZooKeeper's transaction ids only grow.
        self.broker_epochs: dict[int, int] = {}
        self._registrations = 0
        self._expiry: dict[int, Timer] = {}
        self.controller: int | None = None
        self.controller_epoch = 0
        self.partitions: dict[TopicPartition, PartitionState] = {}
        # /brokers/topics: the assignments a reassignment wrote (the others are the placement's).
        self.assignments: dict[TopicPartition, ReplicaAssignment] = {}
        # The /state watches of partitions being reassigned (before IBP 2.7 only: Kafka's
        # PartitionReassignmentIsrChangeHandler; with AlterIsr the controller sees the change).
        self.reassignment_watches: set[TopicPartition] = set()
        self.state_writes = 0  # the controller's /state writes so far (leaders change only so)
        # /isr_change_notification: sequence number → the partitions a leader changed.
        self.isr_notifications: dict[int, tuple[TopicPartition, ...]] = {}
        self._notification_seq = 0

    def register_running(self, brokers: list[int]) -> None:
        """The state of a running cluster: every session open, the first broker controller."""
        for broker in brokers:
            self.sessions[broker] = 0
            self._register(broker, 0)
            timeout_ms = self.cluster.variant.broker_config(broker).zookeeper_session_timeout_ms
            self._expiry[broker] = self.cluster.sim.after(
                timeout_ms * 1000, partial(self.expire, broker, "timeout"))
        self.controller = brokers[0]
        self.controller_epoch = 1

    def heartbeat(self, broker: int, incarnation: int) -> bool:
        """A session heartbeat from the process `incarnation` of `broker`, or, from a process
        whose session holds no /brokers/ids/<broker> (a start, or its session expired meanwhile),
        the create of that ephemeral node. False: the node is still held by the session of the
        broker's previous process. A crashed process closes nothing, so ZooKeeper keeps its
        session, and the node, until the session times out; the create fails with NODEEXISTS
        (ZKCheckedEphemeral, KafkaZkClient.CheckedEphemeral: the owner is not this session).
        KAFKA-7165's delete-and-create applies only to a session the same process held."""
        cluster = self.cluster
        known = self.sessions.get(broker)
        if known is not None and known != incarnation:
            return False
        timer = self._expiry.pop(broker, None)
        if timer:
            timer.cancel()
        timeout_ms = cluster.variant.broker_config(broker).zookeeper_session_timeout_ms
        self._expiry[broker] = cluster.sim.after(timeout_ms * 1000,
                                                 lambda: self.expire(broker, "timeout"))
        if known == incarnation:
            return True
        self._register(broker, incarnation)
        cluster.notify_controller(lambda c: c.on_brokers_changed())
        if self.controller is None:
            self.try_become_controller(broker)
        return True

    def expire(self, broker: int, reason: str) -> None:
        if broker not in self.sessions:
            return
        del self.sessions[broker]
        del self.broker_epochs[broker]
        timer = self._expiry.pop(broker, None)
        if timer:
            timer.cancel()
        self.cluster.log.emit(names.ZK_SESSION_EXPIRED, broker=broker, reason=reason)
        if self.controller == broker:
            self.resign_controller()
        self.cluster.notify_controller(lambda c: c.on_brokers_changed())

    def _register(self, broker: int, incarnation: int) -> None:
        self.sessions[broker] = incarnation
        self._registrations += 1
        self.broker_epochs[broker] = self._registrations

    def resign_controller(self) -> None:
        """/controller is gone: every live broker's watch fires and each tries to create it. A
        broker cut off from ZooKeeper gets the notification when it reconnects within its
        session (ZooKeeper re-delivers a triggered watch then): sent reliably."""
        self.controller = None
        self.cluster.controller_gone()
        for broker in sorted(self.sessions):
            self.cluster.send(NODE, broker, ZK_MESSAGE_BYTES,
                              partial(self.cluster.run_for_controller, broker), reliable=True)

    def try_become_controller(self, broker: int) -> None:
        if self.controller is not None or broker not in self.sessions:
            return
        self.controller = broker
        self.controller_epoch += 1
        self.cluster.controller_elected(broker, self.controller_epoch)

    def update_isr(self, key: TopicPartition, leader_epoch: int, isr: tuple[int, ...],
                   version: int, writer: str = "leader") -> int | None:
        """A conditional ISR write, by the leader (before 2.7) or by the controller for it
        (AlterIsr, 2.7+); the new version, or None if it lost the race."""
        state = self.partitions[key]
        if state.version != version or state.leader_epoch != leader_epoch:
            return None
        state.isr = isr
        state.version += 1
        self.wrote(key, state, writer)
        return state.version

    def write_state(self, key: TopicPartition, state: PartitionState) -> None:
        """The controller's write of a partition's /state (elections, its own ISR shrinks)."""
        self.partitions[key] = state
        self.state_writes += 1
        self.wrote(key, state, "controller")

    def wrote(self, key: TopicPartition, state: PartitionState, writer: str) -> None:
        self.cluster.log.emit(names.ZK_PARTITION_STATE, topic=key[0], partition=key[1],
                              leader=state.leader, epoch=state.leader_epoch,
                              isr=list(state.isr), version=state.version, writer=writer)
        if key in self.reassignment_watches:  # any write of the znode fires the data watch
            self.cluster.notify_controller(lambda c: c.reassignment.isr_changed([key]))

    def full_assignment(self, key: TopicPartition) -> ReplicaAssignment:
        """The partition's assignment as /brokers/topics holds it."""
        written = self.assignments.get(key)
        return written if written is not None else ReplicaAssignment(
            self.cluster.assignment(key))

    def write_assignment(self, key: TopicPartition, assignment: ReplicaAssignment) -> None:
        """The controller's write of the partition's assignment into /brokers/topics/<topic>
        (KafkaController.updateReplicaAssignmentForPartition)."""
        self.assignments[key] = assignment
        self.cluster.log.emit(names.ZK_PARTITION_ASSIGNMENT, topic=key[0], partition=key[1],
                              replicas=list(assignment.replicas),
                              adding=list(assignment.adding),
                              removing=list(assignment.removing))

    def add_isr_change_notification(self, partitions: tuple[TopicPartition, ...]) -> int:
        """A leader creates the sequential child /isr_change_notification/isr_change_N."""
        self._notification_seq += 1
        self.isr_notifications[self._notification_seq] = partitions
        return self._notification_seq

    def take_isr_change_notifications(self) -> dict[int, tuple[TopicPartition, ...]]:
        """The controller reads every child and deletes it."""
        taken, self.isr_notifications = self.isr_notifications, {}
        return taken
