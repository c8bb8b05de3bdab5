"""What a fetch client (rig.cluster.fetch_client) uses of the model around it: the cluster
that hosts it and the brokers it reaches (Protocols; rig.cluster.cluster.Cluster and
rig.cluster.broker.Broker are what a run gives it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from rig.cluster.context import Strategies
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg
from rig.cluster.network import Network, Node
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica
from rig.cluster.wire import Meter
from rig.engine import Simulation
from rig.engine.rng import Streams
from rig.events import EventLog


class Leader(Protocol):
    """A broker as a fetch client reaches it."""

    alive: bool
    machine_down: bool  # after a power loss, until the restart

    @property
    def replicas(self) -> Mapping[TopicPartition, Replica]: ...

    def on_fetch(self, request: Any) -> None: ...

    def on_epoch_request(self, key: TopicPartition, epoch: int) -> tuple[int, int] | None: ...


class ClientHost(Protocol):
    """What a fetch client uses of the model around it (rig.cluster.cluster.Cluster)."""

    sim: Simulation
    log: EventLog
    meter: Meter
    network: Network
    strategies: Strategies
    streams: Streams  # the variant's named random streams
    variant: Any  # the scenario's variant (its `kafka` release)
    clients: list[Any]  # every client the cluster tells of connection resets
    coasting: bool  # idle rounds may be advanced in closed form (rig.cluster.coast)

    @property
    def brokers(self) -> Mapping[int, Leader]: ...

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False, kind: str = "control") -> None: ...

    def unclean_election(self, key: TopicPartition) -> bool:
        """unclean.leader.election.enable for the partition's topic."""
        ...

    def halt(self, broker_id: int, key: TopicPartition, leader: int, leader_leo: int,
             log_end_offset: int) -> None:
        """The broker stops at once: its follower of `key` would have to truncate below its
        own log end with unclean election off."""
        ...

    def begin_coast(self, client: Any, request: FetchRequestMsg,
                    response: FetchResponseMsg) -> bool:
        """Whether `client` (a FetchClient) coasts from here (rig.cluster.coast.begin)."""
        ...


__all__ = ["ClientHost", "Leader"]
