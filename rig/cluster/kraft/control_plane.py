"""The KRaft control plane of one variant (the `kraft` controller kind): the active controller
and each broker's lifecycle, behind the questions the cluster asks every control plane
(rig.strategies.controller). One active controller, node "controller"; the Raft quorum of
several controllers and its elections are not modelled yet."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from rig.cluster.kraft.alter_partition_manager import AlterPartitionManager
from rig.cluster.kraft.broker_lifecycle import BrokerLifecycle
from rig.cluster.kraft.partition_change_builder import PartitionRegistration
from rig.cluster.kraft.quorum_controller import NODE, QuorumController
from rig.cluster.partition import TopicPartition


class KRaftControlPlane:
    nodes = (NODE,)

    def __init__(self, cluster: Any):
        self.cluster = cluster
        self.variant = cluster.variant
        self.sim = cluster.sim
        self.log = cluster.log
        self.topics = cluster.topics
        self.controller = QuorumController(self)
        self.isr_writer = AlterPartitionManager(self)
        self.lifecycles: dict[int, BrokerLifecycle] = {}

    # -- what the controller and the lifecycles use --------------------------------------------
    @property
    def brokers(self) -> Mapping[int, Any]:
        return self.cluster.brokers

    def send(self, *args: Any, **kwargs: Any) -> None:
        self.cluster.send(*args, **kwargs)

    def assignment(self, key: TopicPartition) -> tuple[int, ...]:
        return self.cluster.assignment(key)

    # -- what the cluster asks of every control plane -----------------------------------------
    @property
    def partitions(self) -> Mapping[TopicPartition, PartitionRegistration]:
        return self.controller.partitions

    def node_alive(self, node: object) -> bool:
        return True  # the controller node never fails in this model (no quorum yet)

    def has_controller(self) -> bool:
        return True

    def create_partition(self, key: TopicPartition, replicas: tuple[int, ...]) -> None:
        self.controller.partitions[key] = PartitionRegistration(tuple(replicas), tuple(replicas),
                                                                replicas[0])

    def start(self) -> None:
        """A running cluster: every broker registered, unfenced and caught up with the log;
        each partition led by its first replica at epoch 0 with a full ISR."""
        controller = self.controller
        controller.start_running(sorted(self.brokers))
        parts = controller.partitions
        leaders = {key: part.leader for key, part in parts.items()}
        isrs = {key: part.isr for key, part in parts.items()}
        for broker in self.brokers.values():
            broker.on_leader_and_isr(0, {key: parts[key] for key in broker.replicas}, quiet=True)
            broker.on_update_metadata(0, leaders, isrs, quiet=True)
            broker.start_tasks()
            life = self.lifecycles[broker.id] = BrokerLifecycle(self, broker)
            life.start_running(controller.registrations[broker.id].epoch)

    def broker_restarted(self, broker: Any) -> None:
        self.lifecycles[broker.id].restart()

    def controlled_shutdown(self, broker: Any, handle: Any) -> None:
        """The `controlled-shutdown` fault: the broker asks, and stops through `handle` once
        let go (rig.cluster.cluster.ShutdownHandle)."""
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
