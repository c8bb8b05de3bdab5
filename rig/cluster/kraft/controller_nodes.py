"""A KRaft broker's channels to the controller (Kafka's NodeToControllerChannelManager with a
RaftControllerNodeProvider): the controller a channel sends to is the Raft leader the broker
knows from its metadata fetches (none known: it looks again every 100 ms), and its connections
reach controllers that may not be brokers. The AlterPartition queue
(rig.cluster.kraft.alter_partition_manager) and the broker's lifecycle
(rig.cluster.kraft.broker_lifecycle: its "heartbeat" channel) each have one."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel


def controller_channel(plane: Any, broker: Any, name: str = "",
                       retry_timeout_ms: int | None = None,
                       request_timeout_ms: int | None = None) -> BrokerToControllerChannel:
    """A channel of `broker`'s process to the active controller it knows (the timeouts:
    rig.cluster.broker_to_controller_channel)."""
    life = plane.lifecycles[broker.id]
    return BrokerToControllerChannel(plane, broker, lambda: life.known, ControllerNodes(plane),
                                     name, retry_timeout_ms, request_timeout_ms)


class ControllerNodes:
    """What a broker's connections to the controllers see (ConnectionStates' host): a combined
    controller is its broker's process; a dedicated one a process of its own on a machine rig
    never powers off; the one controller of a cluster without a quorum never fails."""

    def __init__(self, plane: Any):
        cluster = plane.cluster
        self.sim, self.network, self.streams = cluster.sim, cluster.network, cluster.streams
        self.variant = cluster.variant
        self.brokers = _Nodes(plane)


class _Nodes:
    """The nodes by id, as ConnectionStates looks them up (`brokers[node]`)."""

    def __init__(self, plane: Any):
        self.plane = plane

    def __getitem__(self, node: Any) -> Any:
        brokers = self.plane.brokers
        if node in brokers:
            return brokers[node]
        return SimpleNamespace(alive=self.plane.node_alive(node), machine_down=False)


__all__ = ["ControllerNodes", "controller_channel"]
