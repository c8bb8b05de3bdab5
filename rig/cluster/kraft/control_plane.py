"""The KRaft control plane of one variant (the `kraft` controller kind): the controllers and
each broker's lifecycle, behind the questions the cluster asks every control plane
(rig.strategies.controller).

Without cluster.controllers: one controller, node "controller", that never fails (every append
committed at once). With it: a quorum of controller nodes (dedicated ids, or inside brokers in
combined mode), each a Raft voter (rig.cluster.kraft.raft) with its own copy of the metadata
log and its own QuorumController; the Raft leader's is the active one once its epoch's first
record is committed. They can crash, restart and be cut off like any node; brokers find the
active controller through their metadata fetches (rig.cluster.kraft.broker_lifecycle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from rig.cluster.kraft.alter_partition_manager import AlterPartitionManager
from rig.cluster.kraft.broker_lifecycle import BrokerLifecycle
from rig.cluster.kraft.metadata_log import MetadataLog
from rig.cluster.kraft.partition_change_builder import PartitionRegistration
from rig.cluster.kraft.quorum_controller import NODE, QuorumController
from rig.cluster.kraft.quorum_state import QuorumState
from rig.cluster.kraft.raft import QuorumConfig, RaftNode
from rig.cluster.partition import TopicPartition
from rig.events import names
from rig.protocol.errors import NOT_CONTROLLER

INITIAL_QUORUM_EPOCH = 1


class KRaftControlPlane:
    def __init__(self, cluster: Any):
        self.cluster = cluster
        self.variant = cluster.variant
        self.sim = cluster.sim
        self.log = cluster.log
        self.topics = cluster.topics
        self.isr_writer = AlterPartitionManager(self)
        self.lifecycles: dict[int, BrokerLifecycle] = {}
        specs = cluster.variant.controllers
        self.quorum = bool(specs)
        self.raft: dict[int, RaftNode] = {}
        self.controllers: dict[int | str, QuorumController] = {}
        self.combined: set[int] = set()  # voters that run inside a broker's process
        if not self.quorum:
            self.nodes: tuple[Any, ...] = (NODE,)  # the nodes besides the brokers
            self.controller = QuorumController(self)
            self.controllers[NODE] = self.controller
            self.voters: tuple[int, ...] = ()
            return
        config = cluster.variant.config
        quorum = QuorumConfig(config.controller_quorum_election_timeout_ms,
                              config.controller_quorum_fetch_timeout_ms,
                              config.raft_pre_vote, config.raft_check_quorum)
        self.voters = tuple(c.id for c in specs)
        self.combined = {c.id for c in specs if c.combined}
        self.nodes = tuple(c.id for c in specs if not c.combined)
        for spec in specs:
            metadata = MetadataLog(cluster.sim, quorum=True)
            self.controllers[spec.id] = QuorumController(self, spec.id, metadata)
            self.raft[spec.id] = RaftNode(self, spec.id, self.voters, metadata, quorum,
                                          cluster.streams.get(f"kraft/quorum/{spec.id}"))
            if spec.rack is not None and not spec.combined:
                cluster.network.place(spec.id, spec.rack)
        self.controller = self.controllers[self.voters[0]]  # the active one, or the last
        self.active: QuorumController | None = self.controller
        self._lost_at_us: int | None = None  # when the last active controller stopped
        self._skipped: dict[int, int] = {}  # broker → the voter its last fetch failed on
        self._observer_rngs: dict[int, Any] = {}

    # -- what the controller and the lifecycles use --------------------------------------------
    @property
    def brokers(self) -> Mapping[int, Any]:
        return self.cluster.brokers

    def send(self, *args: Any, **kwargs: Any) -> None:
        self.cluster.send(*args, **kwargs)

    @property
    def streams(self) -> Any:
        return self.cluster.streams

    def watch_connections(self, client: Any) -> None:
        """`client` (a broker's channel to the controller) hears of connection resets."""
        self.cluster.clients.append(client)

    def assignment(self, key: TopicPartition) -> tuple[int, ...]:
        return self.cluster.assignment(key)

    # -- what the cluster asks of every control plane -----------------------------------------
    def current_replicas(self, key: TopicPartition) -> tuple[int, ...]:
        """The partition's replicas as the (last) active controller's registration holds them:
        a reassignment changes them (during one, the target followed by the removing ones)."""
        return self.controller.partitions[key].replicas

    @property
    def partitions(self) -> Mapping[TopicPartition, PartitionRegistration]:
        return self.controller.partitions

    def node_alive(self, node: object) -> bool:
        """A dedicated controller node is up while its process is (one controller: always)."""
        raft = self.raft.get(node) if isinstance(node, int) else None
        return raft.alive if raft is not None and node not in self.combined else True

    def has_controller(self) -> bool:
        return not self.quorum or self.active is not None

    def create_partition(self, key: TopicPartition, replicas: tuple[int, ...]) -> None:
        for controller in self.controllers.values():
            controller.partitions[key] = PartitionRegistration(
                tuple(replicas), tuple(replicas), replicas[0])

    def start(self) -> None:
        """A running cluster: every broker registered, unfenced and caught up with the log;
        each partition led by its first replica at epoch 0 with a full ISR. A quorum starts
        with its first voter leading epoch 1, every record committed on every voter."""
        controller = self.controller
        for other in self.controllers.values():
            if other is not controller:
                other.start_running(sorted(self.brokers), active=False)
        controller.start_running(sorted(self.brokers))
        for node, raft in self.raft.items():
            if node == controller.node:
                raft.start_leader(INITIAL_QUORUM_EPOCH)
            else:
                raft.start_follower(INITIAL_QUORUM_EPOCH, int(controller.node))
        parts = controller.partitions
        leaders = {key: part.leader for key, part in parts.items()}
        isrs = {key: part.isr for key, part in parts.items()}
        epochs = {key: part.leader_epoch for key, part in parts.items()}
        for broker in self.brokers.values():
            broker.on_leader_and_isr(0, {key: parts[key] for key in broker.replicas}, quiet=True)
            broker.on_update_metadata(0, leaders, isrs, quiet=True, epochs=epochs)
            broker.start_tasks()
            life = self.lifecycles[broker.id] = BrokerLifecycle(self, broker)
            life.start_running(controller.registrations[broker.id].epoch)

    def broker_restarted(self, broker: Any) -> None:
        if broker.id in self.combined:
            self.restart_controller(broker.id)
        self.lifecycles[broker.id].restart()

    def min_isr_altered(self, topic: str | None) -> None:
        """The active controller writes the change (and clears ELRs); with none active the
        alteration reaches no controller (an admin client would retry: not modelled)."""
        active = self.active if self.quorum else self.controller
        if active is not None:
            active.min_isr_altered(topic)

    def reassign(self, key: TopicPartition, target: tuple[int, ...]) -> int:
        """The `reassign` fault: AlterPartitionReassignments reaches the active controller
        (none active: NOT_CONTROLLER, and the reassignment is not made). Returns the error."""
        active = self.active if self.quorum else self.controller
        if active is None:
            return NOT_CONTROLLER
        return active.reassign(key, target)

    def broker_crashed(self, broker: Any) -> None:
        """A combined controller dies with its broker's process."""
        if broker.id in self.combined:
            self.crash_controller(broker.id)

    # -- the quorum -----------------------------------------------------------------------------
    def crash_controller(self, node: int) -> None:
        raft = self.raft[node]
        if raft.alive:
            self.log.emit(names.CONTROLLER_CRASH, node=node, quorum_epoch=raft.epoch,
                          active=self.active is self.controllers[node])
            raft.crash()
            self.cluster.reset_connections(node)  # its machine runs: its sockets are reset

    def restart_controller(self, node: int) -> None:
        raft = self.raft[node]
        if not raft.alive:
            raft.restart()
            self.log.emit(names.CONTROLLER_RESTART, node=node, quorum_epoch=raft.epoch,
                          state=raft.state)

    def active_node(self) -> int | None:
        return self.active.node if self.active is not None else None  # type: ignore[return-value]

    def at_controller(self, node: int | str) -> QuorumController:
        return self.controllers[node]

    def any_voter(self, broker: int) -> int:
        """A voter for an observer that knows no leader, at random from the broker's stream,
        not the one that just failed it (skip_voter)."""
        skip = self._skipped.get(broker)
        choices = [v for v in self.voters if v != skip] or list(self.voters)
        rng = self._observer_rngs.get(broker)
        if rng is None:
            rng = self._observer_rngs[broker] = self.cluster.streams.get(
                f"kraft/observer/{broker}")
        return rng.choice(choices)

    def skip_voter(self, broker: int, node: int | str) -> None:
        if isinstance(node, int):
            self._skipped[broker] = node

    def raft_node(self, node: int) -> RaftNode:
        return self.raft[node]

    def election_started(self, raft: QuorumState, pre_vote: bool) -> None:
        self.log.emit(names.QUORUM_ELECTION, node=raft.id, quorum_epoch=raft.epoch
                      + (1 if pre_vote else 0), pre_vote=pre_vote,
                      last_epoch=raft.log.last_epoch, end_offset=raft.log.end_offset)

    def became_leader(self, raft: QuorumState) -> None:
        """A voter won its election (KafkaRaftClient's transition to leader): logged as the
        controller's election; it becomes the active controller once its epoch's first record
        is committed (`committed`)."""
        now = self.sim.now_us
        leaderless = (now - self._lost_at_us) / 1000 if self._lost_at_us is not None else 0.0
        self.log.emit(names.CONTROLLER_ELECTED, node=raft.id, epoch=raft.epoch,
                      quorum_epoch=raft.epoch, votes=sorted(raft.granted),
                      leaderless_ms=leaderless)

    def committed(self, raft: QuorumState) -> None:
        controller = self.controllers[raft.id]
        if not controller.active and raft.state == "leader":
            controller.claim(raft.epoch)
            self.active = self.controller = controller
            self._lost_at_us = None
        controller.committed()

    def stopped_leading(self, raft: QuorumState, reason: str) -> None:
        controller = self.controllers[raft.id]
        was_active = controller.active
        controller.renounce()
        if self.active is controller:
            self.active = None
            self._lost_at_us = self.sim.now_us
        self.log.emit(names.CONTROLLER_RENOUNCED, node=raft.id, quorum_epoch=raft.epoch,
                      reason=reason, was_active=was_active)

    def controlled_shutdown(self, broker: Any, handle: Any) -> None:
        """The `controlled-shutdown` fault: the broker asks, and stops through `handle` once
        let go (rig.cluster.shutdown.ShutdownHandle)."""
        self.lifecycles[broker.id].begin_controlled_shutdown(handle.stop)

    def after_stall(self, broker_id: int, action: Callable[[], None]) -> None:
        self.cluster.after_stall(broker_id, action)


class KRaftMode:
    """The `kraft` controller kind: Kafka 3.3+ (the only one from 4.0; docs/kafka.md §12)."""

    name: ClassVar[str] = "kraft"
    description: ClassVar[str] = ("KRaft controller: registrations, heartbeats and fencing, "
                                  "AlterPartition, Eligible Leader Replicas (3.3+; the only "
                                  "one from 4.0)")
    api_version: ClassVar[int] = 1
    mode: ClassVar[str] = "kraft"

    def control_plane(self, cluster: Any) -> KRaftControlPlane:
        return KRaftControlPlane(cluster)
