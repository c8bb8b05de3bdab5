"""The controller Protocol: which control plane a variant's cluster runs — ZooKeeper and the
controller it elects (Kafka up to 3.9), or KRaft's controller quorum (2.8+, the only one from
4.0). Unlike the other kinds it is not a rule the model asks now and then but the part of the
model that decides leaders and ISRs: `control_plane(cluster)` builds it for one variant.

A control plane (the `ControlPlane` part) answers the cluster's few questions: each partition's
state of record and replicas, whether a controller is up, which extra nodes exist; it creates
partitions, starts the running cluster, takes a restarted broker back, and gives the leaders their
ISR writer (ZooKeeper's conditional write, or KRaft's AlterPartition). `mode` ("zookeeper" or
"kraft") says which configuration keys and faults a variant may use with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from rig.strategies.base import Strategy


class ControlPlane(Protocol):
    nodes: tuple[str, ...]  # nodes besides the brokers (network faults may name them)
    isr_writer: Any  # what a leader changes its ISR through (rig.cluster.context.IsrWriter)

    @property
    def partitions(self) -> Mapping[Any, Any]:
        """Partition → its state of record (leader, leader_epoch, isr, version)."""
        ...

    def node_alive(self, node: object) -> bool: ...

    def has_controller(self) -> bool: ...

    def create_partition(self, key: Any, replicas: tuple[int, ...]) -> None: ...

    def current_replicas(self, key: Any) -> tuple[int, ...]:
        """The partition's replicas now: its placement, or what a reassignment made them."""
        ...

    def start(self) -> None: ...

    def broker_restarted(self, broker: Any) -> None: ...

    def broker_crashed(self, broker: Any) -> None: ...

    def min_isr_altered(self, topic: str | None) -> None:
        """min.insync.replicas of `topic` (None: the cluster default) was changed."""
        ...


class ControllerStrategy(Strategy, Protocol):
    mode: ClassVar[str]  # "zookeeper" | "kraft": the keys and faults a variant may use

    def control_plane(self, cluster: Any) -> ControlPlane:
        """The control plane of one variant's cluster (rig.cluster.cluster.Cluster)."""
        ...
